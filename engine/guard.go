package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/kernel"
	"github.com/sandtray/sandtray/engine/internal/registry"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// What a call passes through in its sandbox: the gate (a call enters,
// the registry's EnterCall; an install holds the sandbox, LockInstall and
// HoldForInstall; the file tools' work counts as a call, toolHost.Hold),
// and the guards that may stop it from outside (guarded: the disk
// watchdog, its sandbox dying).

// installContext is ctx as an install's own on b: it passes the call gate
// (registry.Registry.EnterCall) and the exec gate (engine/internal/execgate)
// the install closes.
func installContext(ctx context.Context, b *box) context.Context {
	return execgate.Holding(registry.InstallContext(ctx, b), b.ID)
}

// holdForWindow is an install's hold on b (capture.Target.Hold): new calls
// wait (holdForInstall); once the calls in flight have ended, so does every
// other process the engine would start in b (engine/internal/execgate), until release;
// and the disk watch between calls leaves b alone meanwhile, as during a
// call (the install's own execs are guarded like calls).
func (e *Engine) holdForWindow(ctx context.Context, b *box) (release func(), err error) {
	calls, err := e.reg.HoldForInstall(ctx, b, e.jobs)
	if err != nil {
		return nil, err
	}
	b.Disk.CallStarted()
	execs := e.execs.Hold(b.ID)
	return sync.OnceFunc(func() {
		execs()
		b.Disk.CallEnded()
		calls()
	}), nil
}

// ready acquires a sandbox and makes sure its container runs.
func (e *Engine) ready(ctx context.Context, ref string) (*box, error) {
	b, err := e.reg.Acquire(ref)
	if err != nil {
		return nil, err
	}
	if err := e.ensureRunning(ctx, b); err != nil {
		e.release(b)
		return nil, err
	}
	return b, nil
}

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
		leave, err := e.reg.EnterCall(ctx, b, cancel, out) // waits while an install has the sandbox online
		if err != nil {
			return run.Result{}, err
		}
		b.Disk.CallStarted() // the watch between calls (diskwatch.go) leaves it alone
		defer func() {
			b.Disk.CallEnded()
			leave()
		}()
		var watched chan struct{}
		limit := e.cfg().Limits.DiskMB << 20
		var inherited int64
		e.reg.Locked(func() { inherited = b.State.Inherited }) // a fork's image holds that much of its limit (F59)
		if limit > 0 {
			watched = make(chan struct{})
			go func() {
				defer close(watched)
				e.runner.WatchDisk(ctx, boxTarget{e, b}, &b.Disk, limit-inherited, cancel)
			}()
		}
		res, err := work(ctx, out)
		var stop *run.Stopped
		if err != nil && errors.As(context.Cause(ctx), &stop) {
			if stop.Outcome.End == sandbox.DiskFull && inherited > 0 { // the sandbox's files, its image's included
				stop.Outcome.DiskMB, stop.Outcome.DiskLimitMB = stop.Outcome.DiskMB+inherited>>20, limit>>20
			}
			res = out.Result(sandbox.ExecResult{ExitCode: stop.Code, Duration: time.Since(started), Outcome: stop.Outcome},
				e.cfg().Limits.OutputBytes, e.cfg().Limits.LogOutputBytes)
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
		why = &run.Stopped{Code: 137, Outcome: sandbox.Outcome{End: sandbox.KilledForMemory, MemoryMB: b.Spec.MemoryMB, WholeSandbox: true}}
	}
	var calls []context.CancelCauseFunc
	e.reg.Locked(func() {
		calls = make([]context.CancelCauseFunc, 0, len(b.Calls))
		for _, cancel := range b.Calls {
			calls = append(calls, cancel)
		}
	})
	time.AfterFunc(kernel.Grace, func() {
		for _, cancel := range calls {
			cancel(why)
		}
	})
	e.kernels.AbortSoon(b.ID)
}
