package run

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// stoppedDocker is a Docker whose container has stopped: its execs are
// refused as not running.
type stoppedDocker struct{ running }

func (stoppedDocker) Exec(context.Context, string, runtime.ExecOptions) (int, error) {
	return -1, fmt.Errorf("container not running: %w", sandbox.ErrConflict)
}
func (stoppedDocker) Inspect(context.Context, string) (runtime.Container, error) {
	return runtime.Container{State: "exited"}, nil
}

// stopTarget counts its starts; stopping says whether the engine is
// stopping it itself.
type stopTarget struct {
	fakeTarget
	stopping bool
	starts   *int
}

func (t stopTarget) MarkStopped() bool { return !t.stopping }
func (t stopTarget) EnsureRunning(context.Context) error {
	*t.starts++
	return nil
}

// TestAStopInFlightIsNotUndone: a call refused because its sandbox
// stopped starts it again when it stopped behind the engine's back (a
// daemon restart), and not when stop_sandbox stopped it: the user's stop
// wins over the call it cut.
func TestAStopInFlightIsNotUndone(t *testing.T) {
	r := New(stoppedDocker{}, Limits{}, slog.New(slog.DiscardHandler))
	for _, stopping := range []bool{false, true} {
		starts := 0
		_, err := r.Run(context.Background(), stopTarget{stopping: stopping, starts: &starts}, Process{Cmd: []string{"true"}, Timeout: time.Second})
		if err == nil {
			t.Fatalf("stopping %v: an exec in a stopped sandbox succeeded", stopping)
		}
		// One start is Run's own EnsureRunning; a second is the restart.
		if want := map[bool]int{false: 2, true: 1}[stopping]; starts != want {
			t.Errorf("stopping %v: the sandbox was started %d times, want %d", stopping, starts, want)
		}
	}
}
