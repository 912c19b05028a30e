package engine

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// startJob makes x a job: it owns b's busy mark until it ends, and its
// lifetime is bounded by its timeout, job_stop, deleting the sandbox, or
// Close (its run derives from the engine's base context). The outcome carries the output so far and where job_status goes on.
func (e *Engine) startJob(b *box, act sandbox.Activity, x *execution) sandbox.ExecOutcome {
	j := e.jobs.Add(b.id, x.started, x.out.Combined(), x.cancel)
	e.noteJob(j.ID(), b, act)
	x.out.StopProgress()
	sofar, offset := x.out.Snapshot(e.cfg.Limits.OutputBytes)
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
		x.res.Render()
		e.record(b.id, ranActivity(act, x.res, x.err))
		e.jobs.Finish(j, x.res, x.err)
	}()
	return sandbox.ExecOutcome{SandboxID: b.id, JobID: j.ID(), Result: sofar, NextOffset: offset}
}

// JobStatus reports a job's state and its output from offset since.
func (e *Engine) JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	return e.jobs.Status(jobID, since, e.cfg.Limits.OutputBytes)
}

// JobStop kills a running job's process group and waits for it to end.
func (e *Engine) JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error) {
	return e.jobs.Stop(ctx, jobID, e.cfg.Limits.OutputBytes)
}
