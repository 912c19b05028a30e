package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// timeoutFor applies the configured default and maximum to a requested timeout.
func (e *Engine) timeoutFor(requested time.Duration, background bool) (time.Duration, error) {
	maxT := e.cfg.Limits.MaxExecTimeout.Duration
	switch {
	case requested < 0:
		return 0, fmt.Errorf("timeout_s must not be negative: %w", sandbox.ErrInvalid)
	case requested > maxT:
		return 0, fmt.Errorf("timeout_s %d exceeds the maximum %d (limits.max_exec_timeout in the config): %w",
			int(requested.Seconds()), int(maxT.Seconds()), sandbox.ErrInvalid)
	case requested > 0:
		return requested, nil
	case background:
		return maxT, nil
	}
	return e.cfg.Limits.ExecTimeout.Duration, nil
}

// execute runs r in b (see run.Runner.Run).
func (e *Engine) execute(ctx context.Context, b *box, r run.Process) (run.Result, error) {
	return e.runner.Run(ctx, boxTarget{e, b}, r)
}

// boxTarget is a sandbox of the engine as run and kernel see it.
type boxTarget struct {
	e *Engine
	b *box
}

func (t boxTarget) ID() string                              { return t.b.id }
func (t boxTarget) Name() string                            { return t.b.name }
func (t boxTarget) Workdir() string                         { return t.b.spec.Workdir }
func (t boxTarget) EnsureRunning(ctx context.Context) error { return t.e.ensureRunning(ctx, t.b) }
func (t boxTarget) MarkStopped()                            { t.e.setStatus(t.b, sandbox.StatusStopped) }
func (t boxTarget) Gone(err error) error                    { return t.e.gone(t.b, err) }
