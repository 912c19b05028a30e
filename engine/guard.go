package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// stopped is why something outside a call stopped it: the call's result
// ends with text, and its exit code is code.
type stopped struct {
	text string
	code int
}

func (s *stopped) Error() string { return s.text }

// guarded wraps a call's work with what may stop it from outside: the disk
// watchdog (disk.go), and its sandbox dying under it (sandboxDied). The
// call then returns the output it had, and a note of why it stopped,
// instead of an error.
func (e *Engine) guarded(b *box, work runFunc) runFunc {
	return func(ctx context.Context, out *callOutput) (runOutput, error) {
		started := time.Now()
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		e.mu.Lock()
		e.callSeq++
		seq := e.callSeq
		if b.calls == nil {
			b.calls = map[uint64]context.CancelCauseFunc{}
		}
		b.calls[seq] = cancel
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			delete(b.calls, seq)
			e.mu.Unlock()
		}()
		var watched chan struct{}
		if limit := e.cfg.Limits.DiskMB << 20; limit > 0 {
			watched = make(chan struct{})
			go func() {
				defer close(watched)
				e.watchDisk(ctx, b, limit, cancel)
			}()
		}
		res, err := work(ctx, out)
		var stop *stopped
		if err != nil && errors.As(context.Cause(ctx), &stop) {
			res = out.result(sandbox.ExecResult{ExitCode: stop.code, Duration: time.Since(started)},
				e.cfg.Limits.OutputBytes, e.cfg.Limits.LogOutputBytes)
			res.note(stop.text)
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
	why := &stopped{code: -1, text: "the sandbox stopped while this ran (killed or stopped from outside the call); it starts again on next use, with its files"}
	if oomKilled {
		why = &stopped{code: 137, text: fmt.Sprintf("killed for memory: the sandbox's %d MB limit was reached and the whole sandbox was stopped; "+
			"it starts again on next use, with its files; use less memory, or create a sandbox with a larger memory_mb", b.spec.MemoryMB)}
	}
	e.mu.Lock()
	calls := make([]context.CancelCauseFunc, 0, len(b.calls))
	for _, cancel := range b.calls {
		calls = append(calls, cancel)
	}
	e.mu.Unlock()
	time.AfterFunc(kernelGrace, func() {
		for _, cancel := range calls {
			cancel(why)
		}
	})
	e.abortKernelsSoon(b.id)
}
