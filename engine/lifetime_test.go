package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
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

// kernelWatch counts the kernels' execs still running. A kernel's exec ends
// a little after its stream: once the daemon, asked by another exec, no
// longer lists a kernel process in the container, as a slow daemon would
// report it.
type kernelWatch struct {
	runtime.Runtime
	running *atomic.Int32
}

func (d kernelWatch) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	if len(o.Cmd) < 4 || o.Cmd[3] != "sandtray-kernel" {
		return d.Runtime.Exec(ctx, id, o)
	}
	d.running.Add(1)
	defer d.running.Add(-1)
	code, err := d.Runtime.Exec(ctx, id, o)
	check, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	d.Runtime.Exec(check, id, runtime.ExecOptions{Cmd: []string{"pgrep", "-f", "sandtray-kernel"}})
	return code, err
}

// TestCloseWaitsForTheKernels: Close returns only once every kernel's exec
// has ended, and leaves no goroutine of the engine behind.
func TestCloseWaitsForTheKernels(t *testing.T) {
	var running atomic.Int32
	te := newTestEngineOn(t, func(d runtime.Runtime) runtime.Runtime { return kernelWatch{d, &running} })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "true") // the client's connections, before the baseline
	base := testwait.Now()
	for lang, code := range map[string]string{"python": "print(1)", "bash": "echo 1"} {
		if _, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Language: lang, Code: code}); err != nil {
			t.Fatalf("execute %s: %v", lang, err)
		}
	}
	if running.Load() == 0 {
		t.Fatal("no kernel exec runs after execute_code; the test needs one")
	}
	if err := te.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if n := running.Load(); n != 0 {
		t.Errorf("Close returned with %d kernel execs still running", n)
	}
	base.Settle(t, 10*time.Second, 2)
}
