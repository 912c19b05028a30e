package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestStopWaitsForTheRun: job_stop cancels the run, waits until the engine
// says it ended, and reports it stopped with its output; an unknown id is
// ErrNotFound.
func TestStopWaitsForTheRun(t *testing.T) {
	tab := NewTable()
	out := run.NewJobOutput(1 << 10)
	out.Write([]byte("so far\n"))
	ctx, cancel := context.WithCancel(context.Background())
	j := tab.Add("box", time.Now(), out, cancel)
	go func() { // the engine's side: the run ends when cancelled
		<-ctx.Done()
		tab.Finish(j, run.Result{}, nil)
		j.End()
	}()
	if st, err := tab.Status(j.ID(), 0, 1<<10); err != nil || st.Status != sandbox.JobRunning || st.Output != "so far\n" {
		t.Fatalf("running: %+v, %v", st, err)
	}
	st, err := tab.Stop(context.Background(), j.ID(), 1<<10)
	if err != nil || st.Status != sandbox.JobStopped || st.SandboxID != "box" || st.ExitCode != nil {
		t.Errorf("stopped: %+v, %v; want stopped with no exit code", st, err)
	}
	if _, err := tab.Status("job-none", 0, 10); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("unknown job: %v, want ErrNotFound", err)
	}
}

// TestOutputsInNamesRunningJobsOfOneSandbox: what an install does not wait
// for is exactly the jobs still running in its sandbox.
func TestOutputsInNamesRunningJobsOfOneSandbox(t *testing.T) {
	tab := NewTable()
	running, ended, other := run.NewJobOutput(10), run.NewJobOutput(10), run.NewJobOutput(10)
	tab.Add("box", time.Now(), running, func() {})
	done := tab.Add("box", time.Now(), ended, func() {})
	tab.Add("other", time.Now(), other, func() {})
	tab.Finish(done, run.Result{}, nil)
	done.End()
	got := tab.OutputsIn("box")
	if len(got) != 1 || !got[running] {
		t.Errorf("OutputsIn(box) = %v; want only the running job's output %p", got, running)
	}
}
