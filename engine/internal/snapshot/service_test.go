package snapshot

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// ports is a table of forwards, as the engine's port table answers.
type ports struct {
	fw    map[string][]int
	stuck int // a port whose Remove fails (another caller removed it)
	saves []string
}

func (p *ports) Forwards(id string) []sandbox.PortForward {
	var out []sandbox.PortForward
	for _, port := range p.fw[id] {
		out = append(out, sandbox.PortForward{Port: port})
	}
	return out
}

func (p *ports) Remove(id string, port int) bool {
	p.fw[id] = slices.DeleteFunc(p.fw[id], func(x int) bool { return x == port })
	return port != p.stuck
}

func (p *ports) Save(id string) { p.saves = append(p.saves, id) }

// TestEndForwardsClosesEveryForward: a restore's end of a sandbox's
// forwards removes each, returns the ports it removed, sorted, saves the
// table and tells the watchers once; a sandbox without forwards changes
// nothing.
func TestEndForwardsClosesEveryForward(t *testing.T) {
	p := &ports{fw: map[string][]int{"a": {8080, 3000, 5000}}, stuck: 5000}
	published := 0
	s := NewService(New(context.Background(), nil, func() Config { return Config{} }, slog.New(slog.DiscardHandler)),
		Host[string]{Ports: p, Publish: func() { published++ }}, runtime.Capabilities{})
	if got := s.endForwards("a"); !slices.Equal(got, []int{3000, 8080}) {
		t.Errorf("ports closed = %v, want [3000 8080] (5000 was gone already)", got)
	}
	if len(p.fw["a"]) != 0 || !slices.Equal(p.saves, []string{"a"}) || published != 1 {
		t.Errorf("left %v, saved %v, published %d times; want none left, a saved, published once", p.fw["a"], p.saves, published)
	}
	if got := s.endForwards("b"); got != nil || len(p.saves) != 1 || published != 1 {
		t.Errorf("a sandbox without forwards: closed %v, saves %v, published %d; want nothing done", got, p.saves, published)
	}
}

// TestForkRefusesBeforeItTouchesTheSandbox: a fork the runtime cannot
// commit, that the config turns off, of a count out of range, or while the
// user paused new sandboxes, is refused with its kind before the sandbox
// is resolved.
func TestForkRefusesBeforeItTouchesTheSandbox(t *testing.T) {
	for _, tc := range []struct {
		name     string
		caps     runtime.Capabilities
		maxForks int
		count    int
		paused   bool
		want     error
	}{
		{"no commit", runtime.Capabilities{Runtime: "core"}, 4, 1, false, sandbox.ErrUnsupported},
		{"forks off", runtime.Capabilities{Commit: true}, 0, 1, false, sandbox.ErrForbidden},
		{"too many", runtime.Capabilities{Commit: true}, 4, 5, false, sandbox.ErrInvalid},
		{"negative", runtime.Capabilities{Commit: true}, 4, -1, false, sandbox.ErrInvalid},
		{"paused", runtime.Capabilities{Commit: true}, 4, 2, true, sandbox.ErrPaused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := New(context.Background(), nil, func() Config { return Config{MaxForks: tc.maxForks} }, slog.New(slog.DiscardHandler))
			s := NewService(store, Host[string]{
				Paused: func() bool { return tc.paused },
				Bound:  func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) },
				Ready: func(context.Context, string) (string, error) {
					t.Fatal("the sandbox was resolved")
					return "", nil
				},
			}, tc.caps)
			forks, err := s.Fork(context.Background(), sandbox.Owner{}, "box", sandbox.ForkRequest{Count: tc.count})
			if !errors.Is(err, tc.want) || forks != nil {
				t.Errorf("Fork = %v, %v; want no forks and %v", forks, err, tc.want)
			}
		})
	}
}
