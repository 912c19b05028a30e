package engine

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/internal/jobs"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// newJobs is an engine's jobs table and the budget of their output
// (docs/security.md F32): limits.job_output_memory_bytes in memory, then
// limits.job_output_disk_bytes spilled to the engine's own folder in the
// state dir. Finished jobs keep at most half of both together, so running
// ones always have room.
func newJobs(cfg config.Config) (*jobs.Table, *run.Budget) {
	l := cfg.Limits
	budget := run.NewBudget(run.BudgetConfig{Memory: l.JobOutputMemoryBytes, Disk: l.JobOutputDiskBytes,
		StreamFree: l.OutputBytes, Dir: run.SpillDir(cfg.StateDir, randomHex(4))})
	table := jobs.NewTable(jobs.Limits{PerSandbox: l.MaxJobs, Total: l.MaxJobsTotal,
		FinishedBytes: (l.JobOutputMemoryBytes + l.JobOutputDiskBytes) / 2})
	return table, budget
}

// closeJobs forgets every job and removes the spill folder; their runs
// have ended.
func (e *Engine) closeJobs() {
	e.jobs.Close()
	if err := e.outputs.Close(); err != nil {
		e.log.Warn("remove the job-output spill folder", "err", err)
	}
}

// addJob makes x a job of b's, or says why the limits refuse (see jobs.Table.Add).
func (e *Engine) addJob(b *box, x *execution) (*jobs.Job, error) {
	return e.jobs.Add(b.id, b.name, x.started, x.out.Combined(), x.cancel)
}

// startJob makes x, added as j, a job: it owns b's busy mark until it
// ends, and its lifetime is bounded by its timeout, job_stop, deleting the
// sandbox, or Close (its run derives from the engine's base context). The
// outcome carries the output so far and where job_status goes on.
func (e *Engine) startJob(b *box, act sandbox.Activity, x *execution, j *jobs.Job) sandbox.ExecOutcome {
	e.noteJob(j.ID(), b, act)
	x.out.StopProgress()
	sofar, offset := x.out.Snapshot(e.cfg().Limits.OutputBytes)
	sofar.Duration = time.Since(x.started)
	started := act
	started.Stdout = "continues in the background as " + j.ID() + "; its result follows when it ends"
	e.record(b.id, started)
	// The job holds b (and the engine's wait group, through acquire) until
	// it has ended and is recorded.
	go func() {
		defer e.releaseSoon(b)
		defer j.End()
		defer x.cancel()
		<-x.done
		x.out.ReleaseStreams() // the result has its copies; the job keeps the combined output
		x.res.Render()
		e.record(b.id, x.res.Activity(act, x.err))
		e.jobs.Finish(j, x.res, x.err)
	}()
	return sandbox.ExecOutcome{SandboxID: b.id, JobID: j.ID(), Result: sofar, NextOffset: offset}
}

// JobStatus reports a job's state and its output from offset since.
func (e *Engine) JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	return e.jobs.Status(jobID, since, e.cfg().Limits.OutputBytes)
}

// JobStop kills a running job's process group and waits for it to end.
func (e *Engine) JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error) {
	return e.jobs.Stop(ctx, jobID, e.cfg().Limits.OutputBytes)
}
