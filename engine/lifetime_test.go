package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
)

// TestCloseEndsACallInItsWaitWindow: a call still inside its wait window
// when Close runs ends with the engine: it never turns into a job after
// Close has waited for the jobs, running on in a closed engine.
func TestCloseEndsACallInItsWaitWindow(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	type reply struct {
		out sandbox.ExecOutcome
		err error
	}
	got := make(chan reply, 1)
	go func() {
		out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "sleep 30", Wait: 2 * time.Second, Timeout: time.Minute})
		got <- reply{out, err}
	}()
	eventually(t, 20*time.Second, "the call never started running", func() bool {
		n := 0
		te.reg.Locked(func() { n = len(te.reg.BoxesLocked()[id].Calls) })
		return n == 1
	})
	if err := te.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case r := <-got:
		if r.out.JobID != "" {
			st, _ := te.JobStatus(ctx, r.out.JobID, -1)
			t.Errorf("the call became job %s after Close (status %q); want it ended by Close", r.out.JobID, st.Status)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not return after Close")
	}
}

// TestCloseWaitsForTheKernels: Close returns only once every kernel has
// ended, and leaves no goroutine of the engine behind (a kernel's stream
// through the agent's session included).
func TestCloseWaitsForTheKernels(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "true") // the client's connections, before the baseline
	base := testwait.Now()
	for lang, code := range map[string]string{"python": "print(1)", "bash": "echo 1"} {
		if _, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Language: lang, Code: code}); err != nil {
			t.Fatalf("execute %s: %v", lang, err)
		}
	}
	for _, lang := range []string{"python", "bash"} {
		if !te.kernels.Running(id, lang) {
			t.Fatalf("no %s kernel runs after execute_code; the test needs one", lang)
		}
	}
	if err := te.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	for _, lang := range []string{"python", "bash"} {
		if te.kernels.Running(id, lang) {
			t.Errorf("Close returned with the %s kernel still running", lang)
		}
	}
	base.Settle(t, 10*time.Second, 2)
}
