package engine

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// stepper is a handler whose command "step" prints "one", waits for next
// (or its kill), then prints "two" on stderr and exits 7.
func stepper(next <-chan struct{}, procs chan<- *fakeruntime.Proc) fakeruntime.Handler {
	return func(p *fakeruntime.Proc) int {
		if p.Script() != "step" {
			return p.Builtin()
		}
		io.WriteString(p.Stdout, "one\n")
		procs <- p
		select {
		case <-next:
		case <-p.Done():
			return 137
		}
		io.WriteString(p.Stderr, "two\n")
		return 7
	}
}

// jobToEnd polls a job until it is no longer running, and returns its
// last status and its whole output.
func jobToEnd(t *testing.T, le *logicEngine, id string) (sandbox.JobStatus, string) {
	t.Helper()
	var st sandbox.JobStatus
	var all strings.Builder
	var since int64
	eventually(t, seconds, "the job ends", func() bool {
		var err error
		if st, err = le.JobStatus(context.Background(), id, since); err != nil {
			t.Fatal(err)
		}
		all.WriteString(st.Output)
		since = st.NextOffset
		return st.Status != sandbox.JobRunning
	})
	return st, all.String()
}

// TestLogicBackgroundJob: a background command returns a job at once; the
// job shows as running with its output so far, then as exited with its
// exit code and whole output; the sandbox's log has its start and result.
func TestLogicBackgroundJob(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	id := le.create(t, sandbox.CreateRequest{}).ID
	next, procs := make(chan struct{}), make(chan *fakeruntime.Proc, 1)
	le.rt.SetHandler(stepper(next, procs))
	out, err := le.ExecCommand(ctx, le.owner, id, sandbox.CommandRequest{Command: "step", Background: true})
	if err != nil || out.JobID == "" || out.SandboxID != id {
		t.Fatalf("background start: %+v, %v", out, err)
	}
	<-procs
	eventually(t, seconds, "the running job shows its first line", func() bool {
		st, err := le.JobStatus(ctx, out.JobID, 0)
		return err == nil && st.Status == sandbox.JobRunning && st.Output == "one\n" && st.ExitCode == nil
	})
	if jobs := le.Jobs(id); len(jobs) != 1 || jobs[0].ID != out.JobID {
		t.Errorf("Jobs(%s) = %+v, want the running job", sandbox.ShortID(id), jobs)
	}
	close(next)
	st, all := jobToEnd(t, le, out.JobID)
	if st.Status != sandbox.JobExited || st.ExitCode == nil || *st.ExitCode != 7 || all != "one\ntwo\n" {
		t.Errorf("finished job %+v, output %q", st, all)
	}
	logs, _ := le.Logs(ctx, id, 2)
	if len(logs) != 2 || !strings.Contains(logs[0].Stdout, out.JobID) || logs[1].ExitCode == nil || *logs[1].ExitCode != 7 {
		t.Errorf("activity for a job: %+v; want its start (naming the job) and its result", logs)
	}
	_, err = le.JobStatus(ctx, "job-nope", 0)
	wantKind(t, err, sandbox.ErrNotFound)
}

// TestLogicJobStop: job_stop kills a hanging job's process and reports it
// stopped, with no exit code.
func TestLogicJobStop(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	id := le.create(t, sandbox.CreateRequest{}).ID
	procs := make(chan *fakeruntime.Proc, 1)
	le.rt.SetHandler(hangs(procs))
	out, err := le.ExecCommand(ctx, le.owner, id, sandbox.CommandRequest{Command: "hang", Background: true})
	if err != nil || out.JobID == "" {
		t.Fatalf("background start: %+v, %v", out, err)
	}
	p := <-procs
	st, err := le.JobStop(ctx, out.JobID)
	if err != nil || st.Status != sandbox.JobStopped || st.ExitCode != nil || st.NextOffset != int64(len("waiting\n")) {
		t.Errorf("job_stop: %+v, %v", st, err)
	}
	waitKilled(t, p, "after job_stop")
}

// TestLogicCallOutlivesItsWait: a call still running when its wait ends
// continues as a job, returned with the output so far; it finishes in the
// background with its exit code.
func TestLogicCallOutlivesItsWait(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	id := le.create(t, sandbox.CreateRequest{}).ID
	next, procs := make(chan struct{}), make(chan *fakeruntime.Proc, 1)
	le.rt.SetHandler(stepper(next, procs))
	out, err := le.ExecCommand(ctx, le.owner, id, sandbox.CommandRequest{Command: "step", Wait: 200 * time.Millisecond, Timeout: time.Minute})
	if err != nil || out.JobID == "" || out.Result.Stdout != "one\n" {
		t.Fatalf("a call past its wait: %+v, %v; want a job with the output so far", out, err)
	}
	close(next)
	if st, all := jobToEnd(t, le, out.JobID); st.Status != sandbox.JobExited || *st.ExitCode != 7 || all != "one\ntwo\n" {
		t.Errorf("the job the call became: %+v, %q", st, all)
	}
}

// TestLogicDeleteStopsJobs: deleting a sandbox stops its jobs (their
// processes killed) before its container goes.
func TestLogicDeleteStopsJobs(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	id := le.create(t, sandbox.CreateRequest{}).ID
	procs := make(chan *fakeruntime.Proc, 1)
	le.rt.SetHandler(hangs(procs))
	out, err := le.ExecCommand(ctx, le.owner, id, sandbox.CommandRequest{Command: "hang", Background: true})
	if err != nil {
		t.Fatal(err)
	}
	p := <-procs
	if err := le.Delete(ctx, le.owner, id); err != nil {
		t.Fatal(err)
	}
	waitKilled(t, p, "after the sandbox's delete")
	if st, err := le.JobStatus(ctx, out.JobID, 0); err != nil || st.Status != sandbox.JobStopped {
		t.Errorf("the deleted sandbox's job: %+v, %v; want stopped", st, err)
	}
}
