package engine

import (
	"context"
	"errors"
	"time"

	"github.com/sandtray/sandtray/engine/internal/kernel"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// guarded wraps a call's work with what may stop it from outside: the disk
// watchdog (run.Runner.WatchDisk; between calls, diskWatch), and its sandbox
// dying under it (sandboxDied). The
// call then returns the output it had, and the outcome saying why it stopped,
// instead of an error.
func (e *Engine) guarded(b *box, work runFunc) runFunc {
	return func(ctx context.Context, out *run.Output) (run.Result, error) {
		started := time.Now()
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		leave, err := e.enterCall(ctx, b, cancel, out) // waits while an install has the sandbox online
		if err != nil {
			return run.Result{}, err
		}
		b.disk.CallStarted() // the watch between calls (diskwatch.go) leaves it alone
		defer func() {
			b.disk.CallEnded()
			leave()
		}()
		var watched chan struct{}
		if limit := e.cfg.Limits.DiskMB << 20; limit > 0 {
			watched = make(chan struct{})
			go func() {
				defer close(watched)
				e.runner.WatchDisk(ctx, boxTarget{e, b}, &b.disk, limit, cancel)
			}()
		}
		res, err := work(ctx, out)
		var stop *run.Stopped
		if err != nil && errors.As(context.Cause(ctx), &stop) {
			res = out.Result(sandbox.ExecResult{ExitCode: stop.Code, Duration: time.Since(started), Outcome: stop.Outcome},
				e.cfg.Limits.OutputBytes, e.cfg.Limits.LogOutputBytes)
			err = nil
		}
		cancel(nil)
		if watched != nil {
			<-watched
		}
		return res, err
	}
}

// sandboxDied stops the calls still running in b, whose container died: a
// kernel's or exec's stream normally ends with it, but not always (under
// gVisor, a sandbox killed for memory leaves its execs hanging), so each
// call gets a grace to end on its own first. The kernels' execs are
// aborted likewise.
func (e *Engine) sandboxDied(b *box, oomKilled bool) {
	why := &run.Stopped{Code: -1, Outcome: sandbox.Outcome{End: sandbox.SandboxStopped}}
	if oomKilled {
		why = &run.Stopped{Code: 137, Outcome: sandbox.Outcome{End: sandbox.KilledForMemory, MemoryMB: b.spec.MemoryMB, WholeSandbox: true}}
	}
	e.mu.Lock()
	calls := make([]context.CancelCauseFunc, 0, len(b.calls))
	for _, cancel := range b.calls {
		calls = append(calls, cancel)
	}
	e.mu.Unlock()
	time.AfterFunc(kernel.Grace, func() {
		for _, cancel := range calls {
			cancel(why)
		}
	})
	e.kernels.AbortSoon(b.id)
}
