package engine

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// What PID 1 of a sandbox is. No process inside a container can stop or
// kill its PID 1, so whatever spares it (the disk watch's kill) must know
// it is an init of Sandtray's that runs nothing of the sandbox's: Docker's
// own (docker-init, bind-mounted read-only from the host), or Sandtray's
// (kernel.MainCommand: a python sandbox made on demand), but only in the
// run the engine started it in, from the image's files, and in which it
// never executes a program nor loads a module. A container started again
// (stop_sandbox, a reboot) runs its main command from its own files, which
// the sandbox may have changed: that PID 1 is one of the sandbox's
// processes, which the install's freeze stops from outside, through Docker
// (capture's freeze.go), and the disk watch does not spare.

// initRun is when Docker started container id's current run, for a
// container whose PID 1 is Sandtray's own init: only that run's PID 1 is
// trusted (see initOf). Zero (trusting none) when Docker cannot say.
func (e *Engine) initRun(ctx context.Context, id string) time.Time {
	c, err := e.docker.Inspect(ctx, id)
	if err != nil {
		e.log.Warn("read when a new sandbox started; its init will not be trusted", "id", sandbox.ShortID(id), "err", err)
		return time.Time{}
	}
	return c.StartedAt
}

// initOf tells the disk watch and the install's freeze what PID 1 of b's
// container is (run.Init), from the runtime, not from anything the sandbox
// could answer: the agent (its binary on a read-only volume, whatever run
// of the container this is), Docker's own init, or, in a container of an
// older Sandtray, its first kernel's launcher in the run the engine started.
func (e *Engine) initOf(ctx context.Context, b *box) (run.Init, error) {
	c, err := e.docker.Inspect(ctx, b.ID)
	if err != nil {
		return run.Init{}, err
	}
	spare := e.kernels.Pids(b.ID)
	switch {
	case c.Agent:
		return run.Init{Ours: true, Spare: spare}, nil
	case c.Init:
		return run.Init{Ours: true, Main: run.MainOldest, Spare: spare}, nil // docker-init and its main command
	}
	var started time.Time
	e.reg.Locked(func() { started = b.State.InitRun })
	if started.IsZero() || !started.Equal(c.StartedAt) {
		return run.Init{}, nil
	}
	return run.Init{Ours: true, Spare: spare}, nil
}

// signalInit sends sig to PID 1 of b's container from outside (Docker):
// an install's freeze stops one that is not Sandtray's while the sandbox is
// online, as it stops every other process.
func (e *Engine) signalInit(ctx context.Context, b *box, sig string) error {
	return e.gone(b, e.docker.Signal(ctx, b.ID, sig))
}
