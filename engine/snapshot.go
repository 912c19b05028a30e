package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/snapshot"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Snapshots and forks (docs/snapshots.md): the mechanics are
// engine/internal/snapshot's (e.snap); the engine resolves the sandbox,
// holds its calls and processes out while its files are read or written,
// ends what a restore ends, and records the call.

// snapshots is what engine/internal/snapshot needs of the configuration.
func (c *settings) snapshots() snapshot.Config {
	return snapshot.Config{Engine: c.engine, Tag: c.engine[:nameTagLen], StateDir: c.StateDir, Labels: c.labels,
		MaxSnapshots: c.Limits.MaxSnapshots, BudgetMB: c.Limits.SnapshotMB, CommittedMB: c.Limits.CommittedMB}
}

// snapBox is b as engine/internal/snapshot sees it.
func (b *box) snapBox() snapshot.Box { return snapshot.Box{ID: b.id, Name: b.name, Spec: b.spec} }

// ListSnapshots lists a sandbox's snapshots, oldest first.
func (e *Engine) ListSnapshots(ctx context.Context, ref string) ([]sandbox.SnapshotInfo, error) {
	b, err := e.acquire(ref)
	if err != nil {
		return nil, err
	}
	defer e.releaseSoon(b)
	return e.snap.List(ctx, b.id)
}

// Snapshot saves a sandbox's files: its tmpfs folders first, then, with the
// container paused, its changes and a commit. Calls wait meanwhile;
// background jobs are frozen for the commit.
func (e *Engine) Snapshot(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error) {
	if req.Live {
		return sandbox.SnapshotInfo{}, snapshot.ErrNoLive
	}
	label, err := snapshot.CheckLabel(req.Label)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	if e.cfg().Limits.MaxSnapshots == 0 {
		return sandbox.SnapshotInfo{}, fmt.Errorf("snapshots are turned off by the user's config (limits.max_snapshots = 0): %w", sandbox.ErrForbidden)
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	defer e.release(b)
	hold, err := e.snap.Reserve(ctx, b.snapBox(), true)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	id := sandbox.RandomHex(6)
	s, err := e.takeSnapshot(ctx, b, e.snap.Ref(b.id, id), e.snap.Dir(b.id, id),
		map[string]string{snapshot.LabelSandbox: b.id, snapshot.LabelID: id, snapshot.LabelLabel: label}, hold)
	hold.Release(err == nil)
	if err == nil {
		e.snapshotsChanged(b)
	}
	boxTarget{e, b}.log("snapshot_sandbox", owner)(label, err, id)
	return s, err
}

// takeSnapshot saves b as snapshot.Store.Take does, with every call and new
// process held out of it meanwhile.
func (e *Engine) takeSnapshot(ctx context.Context, b *box, ref, dir string, labels map[string]string, h *snapshot.Hold) (sandbox.SnapshotInfo, error) {
	ctx, release, err := e.holdForSnapshot(ctx, b)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	defer release()
	s, err := e.snap.Take(ctx, b.snapBox(), ref, dir, labels, h)
	if err != nil {
		return s, e.gone(b, err)
	}
	return s, nil
}

// holdForSnapshot takes b's install slot and keeps every call and new
// process out of it (as an install does) until release; ctx lets the
// snapshot's own execs in.
func (e *Engine) holdForSnapshot(ctx context.Context, b *box) (context.Context, func(), error) {
	unlock, err := e.lockInstall(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	release, err := e.holdForWindow(ctx, b)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return installContext(ctx, b), func() { release(); unlock() }, nil
}

// Restore puts a sandbox's files back as a snapshot has them, in place: the
// sandbox keeps its container (so its id and name), settings, limits and
// network rules. Its background jobs and kernels end first, and with them
// the servers behind its port forwards, which end too (the result says
// so, and the jobs say they were ended by the restore); calls wait
// meanwhile. snapshot.Store.Restore says how the files come back.
func (e *Engine) Restore(ctx context.Context, owner sandbox.Owner, ref, snap string) (sandbox.RestoreResult, error) {
	start := time.Now()
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.RestoreResult{}, err
	}
	defer e.release(b)
	s, err := e.snap.Find(ctx, b.snapBox(), snap)
	if err != nil {
		return sandbox.RestoreResult{}, err
	}
	rec, err := snapshot.ReadRecord(e.snap.Dir(b.id, s.ID))
	if err != nil {
		return sandbox.RestoreResult{}, fmt.Errorf("snapshot %s of sandbox %s lacks its record in Sandtray's state dir (%v); it cannot be restored: delete it with delete_snapshot: %w",
			s.ID, b.name, err, sandbox.ErrConflict)
	}
	res := sandbox.RestoreResult{SandboxID: b.id, Name: b.name, SnapshotID: s.ID}
	res.JobsEnded = e.jobs.EndIn(b.id, "ended by restore_sandbox (snapshot "+s.ID+")")
	res.KernelsRestarted = slices.ContainsFunc(e.kernels.Started(), func(k string) bool { return strings.HasPrefix(k, b.id+"/") })
	e.kernels.Close(b.id)
	res.PortsClosed = e.endForwards(b)
	hctx, release, err := e.holdForSnapshot(ctx, b)
	if err != nil {
		return res, err
	}
	defer release()
	if err := e.restartIfEnded(hctx, b); err != nil {
		return res, err
	}
	if res.PathsRestored, err = e.snap.Restore(hctx, b.snapBox(), s.ID, rec); err != nil {
		return res, e.gone(b, err)
	}
	res.Milliseconds = time.Since(start).Milliseconds()
	boxTarget{e, b}.log("restore_sandbox", owner)(s.ID, nil, fmt.Sprintf("%d paths; kernels restarted: %v; jobs ended: %d", res.PathsRestored, res.KernelsRestarted, res.JobsEnded))
	return res, nil
}

// endForwards ends b's port forwards and returns their sandbox ports: a
// restore ended every process that could serve them (the sandbox's jobs
// and kernels; a call's processes end with the call), so a forward left
// would be listed, and accept connections, with nothing behind it.
func (e *Engine) endForwards(b *box) []int {
	var ports []int
	for _, fw := range e.ports.Forwards(b.id) {
		if e.ports.Remove(b.id, fw.Port) {
			ports = append(ports, fw.Port)
		}
	}
	if len(ports) > 0 {
		slices.Sort(ports)
		e.ports.Save(b.id)
		e.publish()
	}
	return ports
}

// restartIfEnded starts b's container again when ending its kernels ended
// it (a first kernel on the attachment is its PID 1).
func (e *Engine) restartIfEnded(ctx context.Context, b *box) error {
	c, err := e.docker.Inspect(ctx, b.id)
	if err != nil {
		return e.gone(b, err)
	}
	if c.State == "running" {
		return nil
	}
	e.setStatus(b, sandbox.StatusStopped)
	return e.ensureRunning(ctx, b)
}

// DeleteSnapshot removes one of a sandbox's snapshots.
func (e *Engine) DeleteSnapshot(ctx context.Context, owner sandbox.Owner, ref, snap string) error {
	b, err := e.acquire(ref)
	if err != nil {
		return err
	}
	defer e.release(b)
	s, err := e.snap.Find(ctx, b.snapBox(), snap)
	if err != nil {
		return err
	}
	err = e.snap.Delete(ctx, b.snapBox(), s.ID)
	e.snapshotsChanged(b)
	boxTarget{e, b}.log("delete_snapshot", owner)(s.ID, err, "")
	return err
}

// snapshotsChanged tells the watchers (the app's Snapshots tab) that b's
// snapshots changed, as soon as they did: its SnapshotsChanged moves on.
func (e *Engine) snapshotsChanged(b *box) {
	e.locked(func() { b.snaps++ })
	e.publish()
}

// sweepSnapshots removes, at start-up, the snapshots and fork images of
// this engine whose sandbox is gone (snapshot.Store.Sweep).
func (e *Engine) sweepSnapshots(ctx context.Context) {
	live := map[string]bool{}
	e.locked(func() {
		for id, b := range e.boxes {
			live[id] = true
			live[b.spec.Image] = true
		}
	})
	e.snap.Sweep(ctx, live)
}
