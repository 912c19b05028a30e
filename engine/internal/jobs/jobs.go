// Package jobs is the table of background jobs: runs that went on after
// their call returned (background=true, or a run that outlasted wait_s),
// remembered for job_status and job_stop. The engine starts a job's run and
// tells the table when it ends; the table keeps each job's state, its
// output and how to stop it, and forgets the oldest finished jobs.
package jobs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// kept is how many finished jobs are remembered for job_status.
const kept = 200

// Table is the jobs of one engine. It is safe for concurrent use.
type Table struct {
	mu   sync.Mutex
	byID map[string]*Job // guarded by mu, and so is every job's state after Add
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{byID: map[string]*Job{}} }

// Job is one background run. Its fields after Add are guarded by Table.mu.
type Job struct {
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

// Add remembers a new running job of sandboxID, started at started, whose
// combined output is output and which cancel stops. Call Finish, then End,
// when its run has ended.
func (t *Table) Add(sandboxID string, started time.Time, output *run.JobOutput, cancel context.CancelFunc) *Job {
	j := &Job{id: "job-" + sandbox.RandomHex(6), sandboxID: sandboxID, started: started, cancel: cancel,
		output: output, done: make(chan struct{}), status: sandbox.JobRunning}
	t.add(j)
	return j
}

// ID is the job's id, as job_status takes it.
func (j *Job) ID() string { return j.id }

// End says the job is over: Stop's wait ends.
func (j *Job) End() { close(j.done) }

// Finish records how job j ended.
func (t *Table) Finish(j *Job, out run.Result, err error) {
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

// add remembers j, forgetting the oldest finished jobs beyond kept.
func (t *Table) add(j *Job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byID[j.id] = j
	for len(t.byID) > kept {
		var oldest *Job
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

// Status reports a job's state and its output from offset since, at most
// capBytes of it: a model pages through a long job with next_offset.
func (t *Table) Status(jobID string, since int64, capBytes int) (sandbox.JobStatus, error) {
	t.mu.Lock()
	j, ok := t.byID[jobID]
	if !ok {
		t.mu.Unlock()
		return sandbox.JobStatus{}, noJob(jobID)
	}
	st := sandbox.JobStatus{ID: j.id, SandboxID: j.sandboxID, Status: j.status,
		ExitCode: j.exitCode, Error: j.err, Started: j.started, Duration: j.duration}
	output := j.output
	t.mu.Unlock()
	if st.Status == sandbox.JobRunning {
		st.Duration = time.Since(st.Started)
	}
	// Outside the table's lock: the output has its own.
	st.Output, st.NextOffset = output.Since(since, capBytes)
	return st, nil
}

func noJob(id string) error {
	return fmt.Errorf("no job %q; job ids come from execute_code or execute_command (background=true, or a run that outlasted wait_s): %w", id, sandbox.ErrNotFound)
}

// Stop kills a running job's process group and waits for it to end, or
// for ctx; then it reports the job as Status does.
func (t *Table) Stop(ctx context.Context, jobID string, capBytes int) (sandbox.JobStatus, error) {
	t.mu.Lock()
	j, ok := t.byID[jobID]
	if ok && j.status == sandbox.JobRunning {
		j.stopped = true
		j.cancel()
	}
	t.mu.Unlock()
	if !ok {
		return sandbox.JobStatus{}, noJob(jobID)
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return sandbox.JobStatus{}, fmt.Errorf("gave up waiting for job %s to stop; it is still stopping: check job_status: %w", jobID, ctx.Err())
	}
	return t.Status(jobID, -1, capBytes)
}

// StopIn cancels the running jobs in a sandbox and waits for them.
func (t *Table) StopIn(sandboxID string) {
	t.mu.Lock()
	var running []*Job
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

// OutputsIn returns the outputs of the jobs running in a sandbox: an
// install waits for the calls in flight there, but not for these.
func (t *Table) OutputsIn(sandboxID string) map[*run.JobOutput]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[*run.JobOutput]bool{}
	for _, j := range t.byID {
		if j.sandboxID == sandboxID && j.status == sandbox.JobRunning {
			out[j.output] = true
		}
	}
	return out
}
