package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
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
		te.mu.Lock()
		defer te.mu.Unlock()
		return len(te.boxes[id].calls) == 1
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
