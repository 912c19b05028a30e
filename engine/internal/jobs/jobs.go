// Package jobs is the table of background jobs: runs that went on after
// their call returned (background=true, or a run that outlasted wait_s),
// remembered for job_status and job_stop. The engine starts a job's run and
// tells the table when it ends; the table keeps each job's state, its
// output and how to stop it. It bounds the jobs that run at once (per
// sandbox and in all), and forgets the oldest finished jobs past a count
// and past a size of kept output, giving their output's memory and files
// back to the engine's budget (run.Budget).
package jobs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Limits bound a table.
type Limits struct {
	PerSandbox int // running jobs in one sandbox (limits.max_jobs)
	Total      int // running jobs in all (limits.max_jobs_total)
	// FinishedBytes bounds the output finished jobs keep together (in
	// memory and spilled); past it the oldest are forgotten, the newest
	// always kept. 0: no bound.
	FinishedBytes int64
	// Finished bounds how many finished jobs are kept; 0: DefaultFinished.
	Finished int
}

// DefaultFinished is how many finished jobs are remembered for job_status.
const DefaultFinished = 200

// Table is the jobs of one engine. It is safe for concurrent use.
type Table struct {
	limits Limits

	mu      sync.Mutex
	byID    map[string]*Job // guarded by mu, and so is every job's state after Add
	running int             // jobs whose status is running; guarded by mu
	perBox  map[string]int  // running jobs by sandbox id; guarded by mu
}

// NewTable returns an empty table with limits l.
func NewTable(l Limits) *Table {
	if l.Finished <= 0 {
		l.Finished = DefaultFinished
	}
	return &Table{limits: l, byID: map[string]*Job{}, perBox: map[string]int{}}
}

// Job is one background run. Its fields after Add are guarded by Table.mu.
type Job struct {
	id, sandboxID string
	started       time.Time
	ended         time.Time // when Finish recorded it
	output        *run.JobOutput
	cancel        context.CancelFunc
	stopped       bool   // job_stop asked for it, or StopIn or EndIn
	why           string // what stopped it, when not job_stop (EndIn): its Error
	done          chan struct{}
	status        string
	exitCode      *int
	err           string
	duration      time.Duration
}

// Add remembers a new running job of sandboxID (named name, for errors),
// started at started, whose combined output is output and which cancel
// stops. Call Finish, then End, when its run has ended. It refuses with
// sandbox.ErrTooLarge, saying what to do, when the sandbox or the engine
// already runs as many jobs as the limits allow.
func (t *Table) Add(sandboxID, name string, started time.Time, output *run.JobOutput, cancel context.CancelFunc) (*Job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.perBox[sandboxID]; t.limits.PerSandbox > 0 && n >= t.limits.PerSandbox {
		return nil, fmt.Errorf("sandbox %s already runs %d background jobs (limits.max_jobs); wait for one to end (job_status) "+
			"or stop one you no longer need with job_stop, then call again: %w", name, n, sandbox.ErrTooLarge)
	}
	if t.limits.Total > 0 && t.running >= t.limits.Total {
		return nil, fmt.Errorf("Sandtray already runs %d background jobs across its sandboxes (limits.max_jobs_total); wait for one to end (job_status) "+
			"or stop one you no longer need with job_stop, then call again: %w", t.running, sandbox.ErrTooLarge)
	}
	j := &Job{id: "job-" + sandbox.RandomHex(6), sandboxID: sandboxID, started: started, cancel: cancel,
		output: output, done: make(chan struct{}), status: sandbox.JobRunning}
	t.byID[j.id] = j
	t.running++
	t.perBox[sandboxID]++
	return j, nil
}

// ID is the job's id, as job_status takes it.
func (j *Job) ID() string { return j.id }

// End says the job is over: Stop's wait ends.
func (j *Job) End() { close(j.done) }

// Finish records how job j ended, and forgets the oldest finished jobs
// past the table's limits.
func (t *Table) Finish(j *Job, out run.Result, err error) {
	t.mu.Lock()
	if j.status == sandbox.JobRunning {
		t.running--
		if t.perBox[j.sandboxID]--; t.perBox[j.sandboxID] <= 0 {
			delete(t.perBox, j.sandboxID)
		}
	}
	j.ended = time.Now()
	j.duration = j.ended.Sub(j.started)
	switch {
	case j.stopped:
		j.status, j.err = sandbox.JobStopped, j.why
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
	forgotten := t.trimLocked()
	t.mu.Unlock()
	for _, o := range forgotten {
		o.Release() // outside mu: a release may remove a file
	}
}

// Status reports a job's state and its output from offset since, at most
// capBytes of it: a model pages through a long job with next_offset. Output
// the job printed but the engine dropped, between since and next_offset,
// is named in OutputDropped.
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
	var gap run.Gap
	st.Output, st.NextOffset, gap = output.Since(since, capBytes)
	if gap.To > gap.From {
		st.OutputDropped = fmt.Sprintf("%d bytes of output between offsets %d and %d were dropped: %s",
			gap.To-gap.From, gap.From, gap.To, gap.Why)
	}
	return st, nil
}

func noJob(id string) error {
	return fmt.Errorf("no job %q; job ids come from execute_code or execute_command (background=true, or a run that outlasted wait_s); "+
		"the oldest finished jobs are forgotten once many have finished or their output is large: %w", id, sandbox.ErrNotFound)
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
func (t *Table) StopIn(sandboxID string) { t.EndIn(sandboxID, "") }

// EndIn is StopIn saying why the jobs ended (e.g. "ended by
// restore_sandbox"): a stopped job's Error, which job_status and the app
// show. It returns how many jobs it ended.
func (t *Table) EndIn(sandboxID, why string) int {
	t.mu.Lock()
	var running []*Job
	for _, j := range t.byID {
		if j.sandboxID == sandboxID && j.status == sandbox.JobRunning {
			j.stopped, j.why = true, why
			j.cancel()
			running = append(running, j)
		}
	}
	t.mu.Unlock()
	for _, j := range running {
		<-j.done
	}
	return len(running)
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
