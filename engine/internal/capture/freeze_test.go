package capture

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestFreezeStopsAnInitThatIsNotSandtrays: the freeze leaves an init of
// Sandtray's running (it reaps), and stops any other PID 1 from outside, a
// PID 1 it cannot tell about too; the thaw continues it. A PID 1 that
// cannot be stopped refuses the install.
func TestFreezeStopsAnInitThatIsNotSandtrays(t *testing.T) {
	c := New(nil, Config{}, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		ours     bool
		oursErr  error
		wantStop bool
	}{
		{"Sandtray's init", true, nil, false},
		{"the sandbox's own program", false, nil, true},
		{"an init that cannot be told", true, errors.New("inspect failed"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent []string
			tg := Target{Name: "s",
				InitIsOurs: func(context.Context) (bool, error) { return tc.ours, tc.oursErr },
				SignalInit: func(_ context.Context, sig string) error { sent = append(sent, sig); return nil }}
			f := &frozen{seen: map[string]bool{}}
			if err := c.freezeInit(ctx, tg, f); err != nil {
				t.Fatal(err)
			}
			if want := tc.wantStop; f.init != want || (len(sent) == 1) != want {
				t.Fatalf("stopped %v, signals %v; want stopped %v", f.init, sent, want)
			}
			if err := c.thaw(ctx, tg, f); err != nil {
				t.Fatal(err)
			}
			if tc.wantStop && !slices.Equal(sent, []string{"SIGSTOP", "SIGCONT"}) {
				t.Errorf("signals %v; want SIGSTOP, then SIGCONT at the thaw", sent)
			}
		})
	}
	refused := Target{Name: "s", SignalInit: func(context.Context, string) error { return sandbox.ErrUnavailable }}
	if err := c.freezeInit(ctx, refused, &frozen{}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("a PID 1 Docker could not stop: %v; want the install refused", err)
	}
}
