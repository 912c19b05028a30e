package engine

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestAShortCallLeavesTheLink: a call whose own deadline ends while the
// engine waits for the agent to come on its link gives up alone; the link
// stays, and the next session is on it, with no exec.
func TestAShortCallLeavesTheLink(t *testing.T) {
	var execs atomic.Int32
	te := newTestEngineOn(t, func(d runtime.Full) runtime.Full { return execCounter{d, &execs} })
	if !te.execs.Linking() {
		t.Skip("the daemon is not on this host: no links")
	}
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "true")
	c, err := te.execs.Full.Inspect(ctx, id)
	if err != nil || c.Pid <= 0 {
		t.Fatalf("inspect: pid %d, %v", c.Pid, err)
	}
	// The agent (PID 1) is frozen, so it cannot answer the engine's call to
	// come on the link before the short deadline.
	te.execs.Forget(id)
	if err := syscall.Kill(c.Pid, syscall.SIGSTOP); err != nil {
		t.Skipf("cannot stop the sandbox's PID 1 from here: %v", err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(c.Pid, syscall.SIGCONT)
		}
	}
	defer resume()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if _, err := te.execs.Session(short, id); err == nil {
		t.Log("a session came within the short deadline")
	}
	cancel()
	resume()

	execs.Store(0)
	s, err := te.execs.Session(ctx, id)
	if err != nil || s == nil {
		t.Fatalf("the next session: %v", err)
	}
	if n := execs.Load(); n != 0 {
		t.Errorf("the next session took %d execs: a call's own short deadline gave up the sandbox's link", n)
	}
	if r := te.command(t, id, "echo back"); r.Stdout != "back\n" {
		t.Errorf("after the short call: %+v", r)
	}
}
