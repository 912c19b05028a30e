package snapshot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Host is what the snapshot and fork tools need of the engine's centre:
// its registry of sandboxes (B is its handle of one, held for a call
// between Acquire or Ready and Release), the gate of their calls, the
// activity records and what a restore ends. The engine fills it in.
type Host[B any] struct {
	Box         func(b B) Box                                    // b as the snapshots see it
	Acquire     func(ref string) (B, error)                      // resolves ref and marks it busy
	Ready       func(ctx context.Context, ref string) (B, error) // Acquire, and makes sure its container runs
	Release     func(b B)                                        // ends the call Acquire or Ready began
	ReleaseSoon func(b B)                                        // Release, saving the last use off the caller's path
	// Gone is err, or, when it says b's container is not found and it is
	// gone indeed, why b is gone (and b is dropped).
	Gone func(b B, err error) error
	// LockInstall takes b's install slot; HoldForWindow then keeps every
	// call and new process out of b, as an install does, until release;
	// InstallContext is ctx as the holder's own, which the call gate and
	// engine/internal/execgate let in.
	LockInstall    func(ctx context.Context, b B) (unlock func(), err error)
	HoldForWindow  func(ctx context.Context, b B) (release func(), err error)
	InstallContext func(ctx context.Context, b B) context.Context
	// Record adds a to sandbox id's activity.
	Record func(id string, a sandbox.Activity)
	// SnapshotsChanged tells the watchers (the app's Snapshots tab) that
	// b's snapshots changed; Publish that anything they show did.
	SnapshotsChanged func(b B)
	Publish          func()
	// EndJobs ends sandbox id's background jobs, which say why, and
	// returns how many it ended.
	EndJobs func(id, why string) int
	// Kernels are the sandboxes' persistent interpreters, named
	// "<sandbox id>/<language>".
	Kernels interface {
		Started() []string
		Close(id string)
	}
	// Ports are the sandboxes' port forwards.
	Ports interface {
		Forwards(id string) []sandbox.PortForward
		Remove(id string, port int) bool
		Save(id string)
	}
	// SetStatus records b's status; EnsureRunning starts b's container
	// when it is stopped.
	SetStatus     func(b B, s sandbox.Status)
	EnsureRunning func(ctx context.Context, b B) error
	// Live holds the container ids of the sandboxes there are, and the
	// images they run.
	Live func() map[string]bool

	// What a fork needs, as a new sandbox.
	Paused    func() bool                                                      // the user paused new sandboxes
	Bound     func(ctx context.Context) (context.Context, context.CancelFunc)  // ctx, cut short by the engine's exit
	Reserve   func(limit int) (done func(), err error)                         // a place under limits.max_sandboxes
	NewSpec   func(req sandbox.CreateRequest) (sandbox.Spec, error)            // as create_sandbox makes one, under the config in force
	NameFree  func(name string) error                                          // refuses a name a sandbox has
	CheckGPUs func(ctx context.Context, spec sandbox.Spec) error               // the GPU policy
	Delete    func(ctx context.Context, owner sandbox.Owner, ref string) error // delete_sandbox
	// Forker returns what makes each fork of b: a new sandbox with b's
	// egress rules and package manifest as they are now, and inherited
	// bytes over its base image (each fork's manifest is its own).
	Forker func(of B, inherited int64) func(ctx context.Context, owner sandbox.Owner, spec sandbox.Spec) (sandbox.Info, error)
}

// Service is the snapshot and fork tools (docs/snapshots.md): it resolves
// the sandbox through the Host, holds its calls and processes out while
// its files are read or written, ends what a restore ends, and records
// the call; the mechanics are the Store's. Its state is the Store's,
// under the Store's lock.
type Service[B any] struct {
	store *Store
	host  Host[B]
	caps  runtime.Capabilities
}

// NewService makes the tools over store, for an engine whose runtime can
// do what caps says.
func NewService[B any](store *Store, host Host[B], caps runtime.Capabilities) *Service[B] {
	return &Service[B]{store: store, host: host, caps: caps}
}

// ListSnapshots lists a sandbox's snapshots, oldest first.
func (s *Service[B]) ListSnapshots(ctx context.Context, ref string) ([]sandbox.SnapshotInfo, error) {
	b, err := s.host.Acquire(ref)
	if err != nil {
		return nil, err
	}
	defer s.host.ReleaseSoon(b)
	return s.store.List(ctx, s.host.Box(b).ID)
}

// Snapshot saves a sandbox's files: its tmpfs folders first, then, with the
// container paused, its changes and a commit. Calls wait meanwhile;
// background jobs are frozen for the commit.
func (s *Service[B]) Snapshot(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error) {
	if req.Live {
		return sandbox.SnapshotInfo{}, ErrNoLive
	}
	label, err := CheckLabel(req.Label)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	if s.store.config().MaxSnapshots == 0 {
		return sandbox.SnapshotInfo{}, fmt.Errorf("snapshots are turned off by the user's config (limits.max_snapshots = 0): %w", sandbox.ErrForbidden)
	}
	b, err := s.host.Ready(ctx, ref)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	defer s.host.Release(b)
	bx := s.host.Box(b)
	hold, err := s.store.Reserve(ctx, bx, true)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	id := sandbox.RandomHex(6)
	info, err := s.take(ctx, b, s.store.Ref(bx.ID, id), s.store.Dir(bx.ID, id),
		map[string]string{LabelSandbox: bx.ID, LabelID: id, LabelLabel: label}, hold)
	hold.Release(err == nil)
	if err == nil {
		s.host.SnapshotsChanged(b)
	}
	s.log(b, "snapshot_sandbox", owner)(label, err, id)
	return info, err
}

// take saves b as Store.Take does, with every call and new process held
// out of it meanwhile.
func (s *Service[B]) take(ctx context.Context, b B, ref, dir string, labels map[string]string, h *Hold) (sandbox.SnapshotInfo, error) {
	ctx, release, err := s.hold(ctx, b)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	defer release()
	info, err := s.store.Take(ctx, s.host.Box(b), ref, dir, labels, h)
	if err != nil {
		return info, s.host.Gone(b, err)
	}
	return info, nil
}

// hold takes b's install slot and keeps every call and new process out of
// it (as an install does) until release; ctx lets the holder's own execs
// in.
func (s *Service[B]) hold(ctx context.Context, b B) (context.Context, func(), error) {
	unlock, err := s.host.LockInstall(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	release, err := s.host.HoldForWindow(ctx, b)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return s.host.InstallContext(ctx, b), func() { release(); unlock() }, nil
}

// Restore puts a sandbox's files back as a snapshot has them, in place: the
// sandbox keeps its container (so its id and name), settings, limits and
// network rules. Its background jobs and kernels end first, and with them
// the servers behind its port forwards, which end too (the result says
// so, and the jobs say they were ended by the restore); calls wait
// meanwhile. Store.Restore says how the files come back.
func (s *Service[B]) Restore(ctx context.Context, owner sandbox.Owner, ref, snap string) (sandbox.RestoreResult, error) {
	start := time.Now()
	b, err := s.host.Ready(ctx, ref)
	if err != nil {
		return sandbox.RestoreResult{}, err
	}
	defer s.host.Release(b)
	bx := s.host.Box(b)
	info, err := s.store.Find(ctx, bx, snap)
	if err != nil {
		return sandbox.RestoreResult{}, err
	}
	rec, err := ReadRecord(s.store.Dir(bx.ID, info.ID))
	if err != nil {
		return sandbox.RestoreResult{}, fmt.Errorf("snapshot %s of sandbox %s lacks its record in Sandtray's state dir (%v); it cannot be restored: delete it with delete_snapshot: %w",
			info.ID, bx.Name, err, sandbox.ErrConflict)
	}
	res := sandbox.RestoreResult{SandboxID: bx.ID, Name: bx.Name, SnapshotID: info.ID}
	res.JobsEnded = s.host.EndJobs(bx.ID, "ended by restore_sandbox (snapshot "+info.ID+")")
	res.KernelsRestarted = slices.ContainsFunc(s.host.Kernels.Started(), func(k string) bool { return strings.HasPrefix(k, bx.ID+"/") })
	s.host.Kernels.Close(bx.ID)
	res.PortsClosed = s.endForwards(bx.ID)
	hctx, release, err := s.hold(ctx, b)
	if err != nil {
		return res, err
	}
	defer release()
	if err := s.restartIfEnded(hctx, b); err != nil {
		return res, err
	}
	if res.PathsRestored, err = s.store.Restore(hctx, bx, info.ID, rec); err != nil {
		return res, s.host.Gone(b, err)
	}
	res.Milliseconds = time.Since(start).Milliseconds()
	s.log(b, "restore_sandbox", owner)(info.ID, nil, fmt.Sprintf("%d paths; kernels restarted: %v; jobs ended: %d", res.PathsRestored, res.KernelsRestarted, res.JobsEnded))
	return res, nil
}

// endForwards ends sandbox id's port forwards and returns their sandbox
// ports: a restore ended every process that could serve them (the
// sandbox's jobs and kernels; a call's processes end with the call), so a
// forward left would be listed, and accept connections, with nothing
// behind it.
func (s *Service[B]) endForwards(id string) []int {
	var ports []int
	for _, fw := range s.host.Ports.Forwards(id) {
		if s.host.Ports.Remove(id, fw.Port) {
			ports = append(ports, fw.Port)
		}
	}
	if len(ports) > 0 {
		slices.Sort(ports)
		s.host.Ports.Save(id)
		s.host.Publish()
	}
	return ports
}

// restartIfEnded starts b's container again when ending its kernels ended
// it (a first kernel on the attachment is its PID 1).
func (s *Service[B]) restartIfEnded(ctx context.Context, b B) error {
	c, err := s.store.rt.Inspect(ctx, s.host.Box(b).ID)
	if err != nil {
		return s.host.Gone(b, err)
	}
	if c.State == "running" {
		return nil
	}
	s.host.SetStatus(b, sandbox.StatusStopped)
	return s.host.EnsureRunning(ctx, b)
}

// DeleteSnapshot removes one of a sandbox's snapshots.
func (s *Service[B]) DeleteSnapshot(ctx context.Context, owner sandbox.Owner, ref, snap string) error {
	b, err := s.host.Acquire(ref)
	if err != nil {
		return err
	}
	defer s.host.Release(b)
	bx := s.host.Box(b)
	info, err := s.store.Find(ctx, bx, snap)
	if err != nil {
		return err
	}
	err = s.store.Delete(ctx, bx, info.ID)
	s.host.SnapshotsChanged(b)
	s.log(b, "delete_snapshot", owner)(info.ID, err, "")
	return err
}

// log records in b's activity log what tool did for owner.
func (s *Service[B]) log(b B, tool string, owner sandbox.Owner) func(input string, err error, detail string) {
	return func(input string, err error, detail string) {
		a := sandbox.Activity{Tool: tool, Client: owner.Client, Input: input, Stdout: detail}
		if err != nil {
			a.Error = err.Error()
		}
		s.host.Record(s.host.Box(b).ID, a)
	}
}

// SweepSnapshots removes, at start-up, the snapshots and fork images of
// this engine whose sandbox is gone (Store.Sweep).
func (s *Service[B]) SweepSnapshots(ctx context.Context) {
	s.store.Sweep(ctx, s.host.Live())
}
