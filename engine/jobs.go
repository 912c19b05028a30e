package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// jobsKept is how many finished jobs are remembered for job_status.
const jobsKept = 200

// jobTable is the engine's background jobs, remembered for job_status.
type jobTable struct {
	mu   sync.Mutex
	byID map[string]*job // guarded by mu, and so is every job's state after start
}

func newJobTable() *jobTable { return &jobTable{byID: map[string]*job{}} }

// job is a background exec. Its fields after start are guarded by jobTable.mu.
type job struct {
	id, sandboxID string
	started       time.Time
	output        *run.JobOutput
	cancel        context.CancelFunc
	stopped       bool // job_stop asked for it
	done          chan struct{}
	status        string
	exitCode      *int
	err           string
	duration      time.Duration
}

// startJob makes x a job: it owns b's busy mark until it ends, and its
// lifetime is bounded by its timeout, job_stop, deleting the sandbox, or
// Close (its run derives from the engine's base context). The outcome carries the output so far and where job_status goes on.
func (e *Engine) startJob(b *box, act sandbox.Activity, x *execution) sandbox.ExecOutcome {
	j := &job{id: "job-" + sandbox.RandomHex(6), sandboxID: b.id, started: x.started, cancel: x.cancel,
		output: x.out.Combined(), done: make(chan struct{}), status: sandbox.JobRunning}
	x.out.StopProgress()
	sofar, offset := x.out.Snapshot(e.cfg.Limits.OutputBytes)
	sofar.Duration = time.Since(x.started)
	started := act
	started.Stdout = "continues in the background as " + j.id + "; its result follows when it ends"
	e.record(b.id, started)
	e.jobs.add(j)
	// The job holds b (and the engine's wait group, through acquire) until
	// it has ended and is recorded.
	go func() {
		defer e.releaseSoon(b)
		defer close(j.done)
		defer x.cancel()
		<-x.done
		x.res.Render()
		e.logRun(b.id, act, x.res, x.err)
		e.jobs.finish(j, x.res, x.err)
	}()
	return sandbox.ExecOutcome{SandboxID: b.id, JobID: j.id, Result: sofar, NextOffset: offset}
}

// finish records how job j ended.
func (t *jobTable) finish(j *job, out run.Result, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j.duration = time.Since(j.started)
	switch {
	case j.stopped:
		j.status = sandbox.JobStopped
	case err != nil:
		j.status, j.err = sandbox.JobFailed, err.Error()
	case out.Result.TimedOut:
		j.status = sandbox.JobTimedOut
	default:
		j.status = sandbox.JobExited
	}
	if err == nil && !j.stopped {
		code := out.Result.ExitCode
		j.exitCode = &code
	}
}

// add remembers j, forgetting the oldest finished jobs beyond jobsKept.
func (t *jobTable) add(j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byID[j.id] = j
	for len(t.byID) > jobsKept {
		var oldest *job
		for _, j := range t.byID {
			if j.status != sandbox.JobRunning && (oldest == nil || j.started.Before(oldest.started)) {
				oldest = j
			}
		}
		if oldest == nil {
			return
		}
		delete(t.byID, oldest.id)
	}
}

// JobStatus reports a job's state and its output from offset since.
func (e *Engine) JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	e.jobs.mu.Lock()
	j, ok := e.jobs.byID[jobID]
	if !ok {
		e.jobs.mu.Unlock()
		return sandbox.JobStatus{}, noJob(jobID)
	}
	st := sandbox.JobStatus{ID: j.id, SandboxID: j.sandboxID, Status: j.status,
		ExitCode: j.exitCode, Error: j.err, Started: j.started, Duration: j.duration}
	output := j.output
	e.jobs.mu.Unlock()
	if st.Status == sandbox.JobRunning {
		st.Duration = time.Since(st.Started)
	}
	// Outside the table's lock (the output has its own), and capped like any output: a
	// model pages through a long job with next_offset.
	st.Output, st.NextOffset = output.Since(since, e.cfg.Limits.OutputBytes)
	return st, nil
}

func noJob(id string) error {
	return fmt.Errorf("no job %q; job ids come from execute_code or execute_command (background=true, or a run that outlasted wait_s): %w", id, sandbox.ErrNotFound)
}

// JobStop kills a running job's process group and waits for it to end.
func (e *Engine) JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error) {
	e.jobs.mu.Lock()
	j, ok := e.jobs.byID[jobID]
	if ok && j.status == sandbox.JobRunning {
		j.stopped = true
		j.cancel()
	}
	e.jobs.mu.Unlock()
	if !ok {
		return sandbox.JobStatus{}, noJob(jobID)
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return sandbox.JobStatus{}, fmt.Errorf("gave up waiting for job %s to stop; it is still stopping: check job_status: %w", jobID, ctx.Err())
	}
	return e.JobStatus(ctx, jobID, -1)
}

// stopIn cancels the running jobs in a sandbox and waits for them.
func (t *jobTable) stopIn(sandboxID string) {
	t.mu.Lock()
	var running []*job
	for _, j := range t.byID {
		if j.sandboxID == sandboxID && j.status == sandbox.JobRunning {
			j.stopped = true
			j.cancel()
			running = append(running, j)
		}
	}
	t.mu.Unlock()
	for _, j := range running {
		<-j.done
	}
}
