package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/internal/statedir"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// adopt loads the engine's own containers (statedir.Store.ListOwned):
// those of another engine, and those of an older Sandtray its state dir
// does not know, are left alone. Expired ephemeral sandboxes are reaped by the first reaper
// pass, which runs before New returns.
func (e *Engine) adopt(ctx context.Context) error {
	list, legacy, err := e.store.ListOwned(ctx, e.docker, e.cfg().managed(), e.cfg().engine)
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	statedir.LogLegacy(e.log, legacy)
	var leftovers []string
	for _, c := range list {
		if pool.IsLeftover(c, e.cfg().scope()) {
			leftovers = append(leftovers, c.ID) // a crash left it in this engine's warm pool: never a sandbox
			continue
		}
		b := e.cfg().boxFromContainer(c)
		if st, ok, err := e.store.LoadState(c.ID); err != nil {
			e.log.Warn("unreadable sandbox state; treating it as new", "id", sandbox.ShortID(c.ID), "err", err)
		} else if ok {
			b.State = st
			adoptPooled(b, e.execs)
		}
		acts, err := e.store.LoadActivity(c.ID, activityKept)
		if err != nil {
			e.log.Warn("read activity log", "id", sandbox.ShortID(c.ID), "err", err)
		}
		b.Activity = trimActivity(acts) // to what a sandbox keeps in memory
		e.reg.BoxesLocked()[c.ID] = b
	}
	e.log.Info("adopted sandboxes", "count", len(e.reg.BoxesLocked()))
	// The spares this engine left when it crashed are removed.
	pool.RemoveAll(ctx, e.docker, e.kernels.Close, e.log, leftovers)
	for _, b := range e.reg.BoxesLocked() { // an install cut short by a crash must not leave a sandbox online
		e.capture.RestoreOffline(ctx, boxTarget{e, b}.captureTarget())
	}
	e.reapOnce(ctx)
	e.snapPart.SweepSnapshots(ctx) // engine/internal/snapshot
	return nil
}

// boxFromContainer rebuilds a box from its immutable labels. A container
// without readable labels still gets a box (so the user can see and delete
// it), named after the container, with the configured working directory.
func (c *settings) boxFromContainer(ctr runtime.Container) *box {
	var spec sandbox.Spec
	if err := json.Unmarshal([]byte(ctr.Labels[sandbox.LabelSpec]), &spec); err != nil {
		spec = sandbox.Spec{Image: ctr.Image, Workdir: c.Sandbox.Workdir, Network: sandbox.NetworkNone}
	}
	created, err := time.Parse(time.RFC3339Nano, ctr.Labels[sandbox.LabelCreated])
	if err != nil {
		created = ctr.Created
	}
	name := ctr.Labels[sandbox.LabelName]
	if name == "" { // taken from the pool: named by its rename
		name = c.nameOf(ctr.Name)
	}
	spec.Name = name
	return &box{
		ID: ctr.ID, Name: name, Spec: spec, Created: created, Status: run.StatusOf(ctr.State),
		State: boxState{Persistent: spec.Persistent, LastUsed: created},
	}
}

// ensureRunning starts a stopped sandbox, so a persistent sandbox stopped by
// a reboot or by the user just works on its next use.
func (e *Engine) ensureRunning(ctx context.Context, b *box) error {
	status := e.reg.StatusOf(b)
	if status == sandbox.StatusPaused {
		return e.waitUnpaused(ctx, b)
	}
	if status == sandbox.StatusRunning {
		return nil
	}
	if err := e.docker.Start(ctx, b.ID); err != nil {
		return e.gone(b, fmt.Errorf("start sandbox %s: %w", b.Name, err))
	}
	if b.Spec.Network == sandbox.NetworkBridge && !e.cfg().Sandbox.AllowNetwork {
		// Docker reconnects a bridged sandbox at every start; the user's
		// config now forbids the network.
		e.capture.RestoreOffline(ctx, boxTarget{e, b}.captureTarget())
	}
	e.reg.Locked(func() { b.Status = sandbox.StatusRunning })
	if err := e.networkPart.EgressUp(ctx, netBox{e, b}); err != nil {
		e.log.Warn("start the egress channel", "sandbox", b.Name, "err", err)
	}
	e.publish()
	return nil
}

// waitUnpaused waits while a sandbox is paused: Docker pauses a container
// for as long as a commit of it takes, and a call that arrives meanwhile
// should run after it, not fail.
func (e *Engine) waitUnpaused(ctx context.Context, b *box) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		c, err := e.docker.Inspect(ctx, b.ID)
		if err != nil {
			return e.gone(b, fmt.Errorf("sandbox %s: %w", b.Name, err))
		}
		if st := run.StatusOf(c.State); st != sandbox.StatusPaused {
			e.setStatus(b, st)
			return e.ensureRunning(ctx, b)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sandbox %s stayed paused (was it paused with docker pause? run docker unpause %s): %w", b.Name, sandbox.ShortID(b.ID), sandbox.ErrConflict)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// gone turns a "no such container" from Docker into a clear error, and drops
// the sandbox: it was removed behind the engine's back.
func (e *Engine) gone(b *box, err error) error {
	if !errors.Is(err, sandbox.ErrNotFound) {
		return err
	}
	ctx, cancel := context.WithTimeout(e.reg.Base(), 10*time.Second)
	defer cancel()
	if _, ierr := e.docker.Inspect(ctx, b.ID); !errors.Is(ierr, sandbox.ErrNotFound) {
		return err // the container is there; something inside it was not found
	}
	e.forget(b.ID)
	return fmt.Errorf("sandbox %s no longer exists: its container was removed outside Sandtray; create a new one: %w", b.Name, sandbox.ErrNotFound)
}
