package engine

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestCallWaitsWhilePaused: Docker pauses a sandbox while it is committed; a
// call that arrives then runs once it is unpaused instead of failing.
func TestCallWaitsWhilePaused(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	// A new sandbox starts its python kernel in the background (WarmSoon); a
	// pause that freezes an exec while runc is still joining it wedges the
	// container in Docker (rm -f and inspect hang). Let the kernel come up
	// first: the test is about calls that arrive while paused.
	te.code(t, id, sandbox.CodeRequest{Code: "print(1)"})
	if out, err := exec.Command("docker", "pause", id).CombinedOutput(); err != nil {
		t.Skipf("docker pause: %v %s", err, out)
	}
	eventually(t, 5*time.Second, "the engine never saw the pause", func() bool {
		info, _ := te.Get(context.Background(), id)
		return info.Status == sandbox.StatusPaused
	})
	time.AfterFunc(500*time.Millisecond, func() { exec.Command("docker", "unpause", id).Run() })
	start := time.Now()
	out, err := te.ExecCommand(context.Background(), te.owner, id, sandbox.CommandRequest{Command: "echo after"})
	if err != nil || out.Result.Stdout != "after\n" {
		t.Fatalf("call on a paused sandbox: %+v, %v; want it to wait and run", out.Result, err)
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Errorf("returned after %s, before the sandbox was unpaused", waited)
	}
}
