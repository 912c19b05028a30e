package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// jobOutputKept caps a background job's combined output held for job_status.
const jobOutputKept = 8 << 20

// jobsKept is how many finished jobs are remembered for job_status.
const jobsKept = 200

// job is a background exec. Its fields after start are guarded by Engine.mu.
type job struct {
	id, sandboxID string
	started       time.Time
	output        *jobOutput
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
// Close. The outcome carries the output so far and where job_status goes on.
func (e *Engine) startJob(b *box, act sandbox.Activity, x *execution) sandbox.ExecOutcome {
	j := &job{id: "job-" + randomHex(6), sandboxID: b.id, started: x.started, cancel: x.cancel,
		output: x.out.combined, done: make(chan struct{}), status: sandbox.JobRunning}
	x.out.stopProgress()
	sofar, offset := x.out.snapshot(e.cfg.Limits.OutputBytes)
	sofar.Duration = time.Since(x.started)
	started := act
	started.Stdout = "continues in the background as " + j.id + "; its result follows when it ends"
	e.record(b.id, started)
	e.mu.Lock()
	e.jobs[j.id] = j
	e.pruneJobsLocked()
	e.mu.Unlock()
	e.jobsWG.Add(1)
	go func() {
		defer e.jobsWG.Done()
		defer close(j.done)
		defer x.cancel()
		<-x.done
		e.releaseSoon(b)
		e.logRun(b.id, act, x.res, x.err)
		e.finishJob(j, x.res, x.err)
	}()
	return sandbox.ExecOutcome{SandboxID: b.id, JobID: j.id, Result: sofar, NextOffset: offset}
}

func (e *Engine) finishJob(j *job, out runOutput, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j.duration = time.Since(j.started)
	switch {
	case j.stopped:
		j.status = sandbox.JobStopped
	case err != nil:
		j.status, j.err = sandbox.JobFailed, err.Error()
	case out.result.TimedOut:
		j.status = sandbox.JobTimedOut
	default:
		j.status = sandbox.JobExited
	}
	if err == nil && !j.stopped {
		code := out.result.ExitCode
		j.exitCode = &code
	}
}

// pruneJobsLocked forgets the oldest finished jobs beyond jobsKept.
func (e *Engine) pruneJobsLocked() {
	for len(e.jobs) > jobsKept {
		var oldest *job
		for _, j := range e.jobs {
			if j.status != sandbox.JobRunning && (oldest == nil || j.started.Before(oldest.started)) {
				oldest = j
			}
		}
		if oldest == nil {
			return
		}
		delete(e.jobs, oldest.id)
	}
}

// JobStatus reports a job's state and its output from offset since.
func (e *Engine) JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	e.mu.Lock()
	j, ok := e.jobs[jobID]
	if !ok {
		e.mu.Unlock()
		return sandbox.JobStatus{}, noJob(jobID)
	}
	st := sandbox.JobStatus{ID: j.id, SandboxID: j.sandboxID, Status: j.status,
		ExitCode: j.exitCode, Error: j.err, Started: j.started, Duration: j.duration}
	output := j.output
	e.mu.Unlock()
	if st.Status == sandbox.JobRunning {
		st.Duration = time.Since(st.Started)
	}
	// Outside e.mu (the output has its lock), and capped like any output: a
	// model pages through a long job with next_offset.
	st.Output, st.NextOffset = output.since(since, e.cfg.Limits.OutputBytes)
	return st, nil
}

func noJob(id string) error {
	return fmt.Errorf("no job %q; job ids come from execute_code or execute_command (background=true, or a run that outlasted wait_s): %w", id, sandbox.ErrNotFound)
}

// JobStop kills a running job's process group and waits for it to end.
func (e *Engine) JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error) {
	e.mu.Lock()
	j, ok := e.jobs[jobID]
	if ok && j.status == sandbox.JobRunning {
		j.stopped = true
		j.cancel()
	}
	e.mu.Unlock()
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

// stopJobsOf cancels the running jobs in a sandbox and waits for them.
func (e *Engine) stopJobsOf(sandboxID string) {
	e.mu.Lock()
	var running []*job
	for _, j := range e.jobs {
		if j.sandboxID == sandboxID && j.status == sandbox.JobRunning {
			j.stopped = true
			j.cancel()
			running = append(running, j)
		}
	}
	e.mu.Unlock()
	for _, j := range running {
		<-j.done
	}
}

func (e *Engine) waitJobs() { e.jobsWG.Wait() }
