package engine

import (
	"context"
	"slices"

	"github.com/sandtray/sandtray/engine/internal/probe"
	"github.com/sandtray/sandtray/engine/internal/snapshot"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// snapPart is the snapshot and fork tools (ListSnapshots, Snapshot, Restore,
// DeleteSnapshot, Fork; docs/snapshots.md), over the mechanics of e.snap.
type snapPart = snapshot.Service[*box]

// snapshots is what engine/internal/snapshot needs of the configuration.
func (c *settings) snapshots() snapshot.Config {
	return snapshot.Config{Engine: c.engine, Tag: c.engine[:nameTagLen], StateDir: c.StateDir, Labels: c.labels,
		MaxSnapshots: c.Limits.MaxSnapshots, BudgetMB: c.Limits.SnapshotMB, CommittedMB: c.Limits.CommittedMB,
		MaxForks: c.Limits.MaxForks, MaxSandboxes: c.Limits.MaxSandboxes, DiskMB: c.Limits.DiskMB}
}

// newSnapPart makes e's snapshot and fork tools, once its jobs, kernels
// and ports are made.
func newSnapPart(e *Engine) *snapPart {
	return snapshot.NewService(e.snap, snapshot.Host[*box]{
		Box:     func(b *box) snapshot.Box { return snapshot.Box{ID: b.ID, Name: b.Name, Spec: b.Spec} },
		Acquire: e.reg.Acquire, Ready: e.ready, Release: e.release, ReleaseSoon: e.releaseSoon, Gone: e.gone,
		LockInstall: e.reg.LockInstall, HoldForWindow: e.holdForWindow, InstallContext: installContext,
		Record: e.record, Publish: e.publish, EndJobs: e.jobs.EndIn, Kernels: e.kernels, Ports: e.ports,
		SnapshotsChanged: func(b *box) { // its SnapshotsChanged moves on
			e.reg.Locked(func() { b.Snaps++ })
			e.publish()
		},
		SetStatus: e.setStatus, EnsureRunning: e.ensureRunning,
		Live: func() map[string]bool {
			live := map[string]bool{}
			e.reg.Locked(func() {
				for id, b := range e.reg.BoxesLocked() {
					live[id], live[b.Spec.Image] = true, true
				}
			})
			return live
		},
		Paused: func() (paused bool) {
			e.reg.Locked(func() { paused = e.paused })
			return paused
		},
		Bound: e.reg.Bound, Reserve: e.reg.Reserve, NewSpec: e.newSpec, NameFree: e.nameFree, Delete: e.Delete,
		CheckGPUs: func(ctx context.Context, spec sandbox.Spec) error {
			return probe.CheckGPUs(ctx, e.cfg().GPU, e.docker, spec)
		},
		Forker: func(b *box, inherited int64) func(context.Context, sandbox.Owner, sandbox.Spec) (sandbox.Info, error) {
			var st boxState
			e.reg.Locked(func() {
				st = boxState{Egress: b.State.Egress, Packages: slices.Clone(b.State.Packages), Inherited: inherited}
			})
			return func(ctx context.Context, owner sandbox.Owner, spec sandbox.Spec) (sandbox.Info, error) {
				st.Packages = slices.Clone(st.Packages) // each fork's manifest is its own
				return e.createContainer(ctx, owner, spec, st)
			}
		},
	}, e.caps)
}
