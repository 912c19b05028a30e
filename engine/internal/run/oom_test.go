package run

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/runtime"
)

// running is a Docker whose container never stops running and whose execs
// are refused.
type running struct{}

func (running) Exec(context.Context, string, runtime.ExecOptions) (int, error) {
	return -1, errors.New("refused")
}
func (running) Inspect(context.Context, string) (runtime.Container, error) {
	return runtime.Container{State: "running"}, nil
}
func (running) Kill(context.Context, string) error { return nil }
func (running) Disk(context.Context, string) (runtime.DiskInfo, error) {
	return runtime.DiskInfo{}, nil
}
func (running) SizeRw(context.Context, string) (int64, error) { return 0, nil }
func (running) KillGroups(context.Context, string, string, string, []int) (int, error) {
	return 0, errors.New("refused")
}
func (running) ExecAgent(context.Context, string, string, []string, io.Reader, int) ([]byte, error) {
	return nil, errors.New("refused")
}
func (running) Session(context.Context, string) (*agentclient.Session, error) {
	return nil, errors.New("refused")
}

type fakeTarget struct{}

func (fakeTarget) ID() string                          { return "c0ffee" }
func (fakeTarget) Name() string                        { return "sb-test" }
func (fakeTarget) EnsureRunning(context.Context) error { return nil }
func (fakeTarget) MarkStopped() bool                   { return true }
func (fakeTarget) Gone(err error) error                { return err }
func (fakeTarget) Workdir() string                     { return "" }
func (fakeTarget) User() string                        { return "" }
func (fakeTarget) WaitExecs(context.Context) error     { return nil }

// TestDiedOfMemoryEndsWithItsContext: waiting for Docker to record how a
// sandbox ended gives up when its context does (the engine closing), not
// only at its own deadline.
func TestDiedOfMemoryEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(running{}, Limits{}, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		if r.DiedOfMemory(ctx, fakeTarget{}) {
			t.Error("a running sandbox was named killed for memory")
		}
		if took := time.Since(start); took > 400*time.Millisecond {
			t.Errorf("DiedOfMemory took %s with a context done after 300ms", took)
		}
	})
}
