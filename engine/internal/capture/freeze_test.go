package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
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
			tg := Target{Handle: handle{name: "s"},
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
	refused := Target{Handle: handle{name: "s"}, SignalInit: func(context.Context, string) error { return sandbox.ErrUnavailable }}
	if err := c.freezeInit(ctx, refused, &frozen{}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("a PID 1 Docker could not stop: %v; want the install refused", err)
	}
}

// passDocker answers every freeze pass as root, with roots processes that
// came in from outside and none running.
type passDocker struct {
	Docker
	roots    int
	starting *int // relays still starting, one fewer each time they are counted
}

func (d passDocker) ExecsIn(string) int { return 1 }

func (d passDocker) StartingIn(string) int {
	if d.starting == nil {
		return 0
	}
	n := *d.starting
	*d.starting = max(n-1, 0)
	return n
}

func (d passDocker) ExecAgent(_ context.Context, _, _ string, args []string, _ io.Reader, _ int) ([]byte, error) {
	return fmt.Appendf(nil, "pass 0 %d 0\n", d.roots), nil
}

// TestFreezeWaitsForRelaysStillStarting: a relay the engine let in before
// the install's hold, whose process Docker has not started yet, would start
// after the passes and run through the install's window; the freeze waits
// until none is starting, even when older processes from outside (other
// relays, a job) outnumber the execs in flight.
func TestFreezeWaitsForRelaysStillStarting(t *testing.T) {
	starting := 3
	c := New(passDocker{roots: 3, starting: &starting}, Config{}, slog.New(slog.DiscardHandler))
	tg := Target{Handle: handle{id: "c1", name: "s"},
		InitIsOurs: func(context.Context) (bool, error) { return true, nil }}
	if _, err := c.freeze(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	if starting != 0 {
		t.Errorf("the freeze ended with %d relays still starting; want it to wait for them", starting)
	}
}

// handle is a sandbox as the engine would hand it to capture.
type handle struct{ id, name string }

func (h handle) ID() string                        { return h.id }
func (h handle) Name() string                      { return h.name }
func (handle) Workdir() string                     { return "" }
func (handle) User() string                        { return "" }
func (handle) EnsureRunning(context.Context) error { return nil }
func (handle) MarkStopped() bool                   { return true }
func (handle) Gone(err error) error                { return err }
func (handle) WaitExecs(context.Context) error     { return nil }
