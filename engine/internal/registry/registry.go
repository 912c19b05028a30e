// Package registry is the engine's sandboxes (boxes) and MCP sessions,
// and the gate that counts every call so the engine's Close can wait for
// them: package engine's centre, which every other part reaches through it.
package registry

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/internal/statedir"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Registry is the engine's sandboxes (boxes) and MCP sessions, and the gate
// that counts every call so Close can wait for them.
//
// A box is live from register (or adoption) until the reaper or Delete
// picks it (reaping), and gone once it is forgotten. Only a live box can be
// acquired, and the reaper only picks a box no call holds, under the same
// lock, so a call never runs in a container being removed.
//
// A session's default sandbox (execute_* without sandbox_id) is created
// once per session: the first call creates it (the session is creating
// until then), concurrent calls of the same session wait for it or for
// their ctx, and other sessions never wait.
//
// Its lock (regMu) is this package's own: no code outside it can take it.
// The engine reads and changes what the lock guards through Locked,
// WithRef and the other methods here. Besides the registry's fields and
// every box's, the lock also guards what the Engine keeps of its own
// under it: its watchers, paused, notices and noticeSeq, which the engine
// changes only under Locked(func(){...}).
type Registry struct {
	// regMu guards the fields below and every field of each box but its disk
	// (which has its own lock), and also the Engine's watchers, paused,
	// notices and noticeSeq. Lock order: only leaf locks are taken under regMu
	// (the pool's, probe.Watch's and the port table's, which the snapshot
	// reads); every other lock of the engine or of its packages (kernel.Set,
	// statedir.LastUse, the stats sampler, run.Disk, a box's install slot, the port
	// saves') is taken before regMu, never under it. regMu is never held across a
	// Docker call or a disk write. Only this package takes it, in the
	// Registry's methods (Locked, WithRef, …): TestOnlyTheRegistryTakesItsLock.
	regMu    sync.Mutex
	boxes    map[string]*Box // by container id
	sessions map[string]*Session
	creating int           // creates under way, counted against limits.max_sandboxes
	callSeq  uint64        // numbers the calls in boxes' calls
	closing  bool          // Close has begun: Enter, Acquire and Create refuse
	reap     chan struct{} // buffer of one: a coalesced request for a reaper pass; not guarded
	// base is the engine's lifetime, the one root context of the engine:
	// its loops, calls, jobs and kernels derive from it, and Close cancels
	// it (cancel). It outlives the ctx the engine's New was called with,
	// which only bounds the start-up. Set once by New.
	base   context.Context
	cancel context.CancelFunc
	// wg counts the background loops, every call from Acquire (or Enter) to
	// its release, jobs included (a job holds its sandbox until it ends), and
	// every exec of the kernels. Add only under regMu while !closing, so that
	// once Close has set closing, Wait sees every Add.
	wg sync.WaitGroup
}

// New is an empty registry, with its lifetime (Base) begun.
func New() *Registry {
	// The one root: nothing outlives the engine, and the engine outlives
	// every caller's ctx.
	base, cancel := context.WithCancel(context.Background())
	return &Registry{boxes: map[string]*Box{}, sessions: map[string]*Session{}, reap: make(chan struct{}, 1),
		base: base, cancel: cancel}
}

// ErrClosing refuses work that arrives while the engine closes.
var ErrClosing = fmt.Errorf("Sandtray is shutting down; call again once it runs again: %w", sandbox.ErrUnavailable)

// Base is the engine's lifetime (see Registry.base): cancelled by Close.
func (r *Registry) Base() context.Context { return r.base }

// Reap delivers the requests for a reaper pass (SessionEnded's).
func (r *Registry) Reap() <-chan struct{} { return r.reap }

// Add counts work in wg as Enter does, but unrefused: the warm pool's
// (see the engine's poolHost.Go). Pair with Leave.
func (r *Registry) Add() { r.wg.Add(1) }

// Leave ends work counted by Enter (or Add).
func (r *Registry) Leave() { r.wg.Done() }

// Closing reports whether Close has begun.
func (r *Registry) Closing() bool {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	return r.closing
}

// BoxesLocked is the registry's boxes by container id, to read, or to
// register a box in. Callers hold the lock (inside Locked).
func (r *Registry) BoxesLocked() map[string]*Box { return r.boxes }

// SessionsLocked is the registry's sessions by id. Callers hold the lock
// (inside Locked).
func (r *Registry) SessionsLocked() map[string]*Session { return r.sessions }

// Stage is where a box is in its life.
type Stage int

const (
	Live    Stage = iota // usable
	Reaping              // being removed (reaper or Delete): Acquire refuses it
	Gone                 // forgotten: whoever still holds it holds a stale record
)

// Box is the engine's record of one sandbox; guarded by the registry's
// lock (see Locked).
type Box struct {
	ID, Name string
	Spec     sandbox.Spec
	Created  time.Time
	Stage    Stage
	Status   sandbox.Status
	State    statedir.State
	Activity []sandbox.Activity
	Busy     int                                // calls in flight; a busy sandbox is never reaped
	Stopping bool                               // stop_sandbox is stopping it: no call that its stop cuts starts it again
	OOMKills int64                              // the cgroup's OOM-kill count when last read
	Disk     run.Disk                           // what the disk watchdog keeps between calls; its own lock
	Calls    map[uint64]context.CancelCauseFunc // the calls running in it, to stop them (see the engine's guarded)
	// install is the sandbox's install slot (capacity 1): installs take
	// turns, so one never takes the network away from another. Made on
	// first use; it goes with the box.
	install chan struct{}
	gate    installGate // keeps calls out while an install has it online (see EnterCall)
	Snaps   uint64      // counts the changes to its snapshots (Info.SnapshotsChanged)
}

// Installing reports whether an install holds b (see HoldForInstall).
// Callers hold the lock (inside Locked).
func (b *Box) Installing() bool { return b.gate.window != nil }

// installGate is a box's gate for installs; guarded by the registry's lock.
type installGate struct {
	// window is closed when an install's hold on the sandbox ends; nil
	// when none holds it.
	window chan struct{}
	// outs are the job outputs of the calls in b.Calls that may become
	// jobs, by call number: which of them are jobs (see HoldForInstall).
	outs map[uint64]*run.JobOutput
	// waiting counts the calls waiting for window to close.
	waiting int
}

// installCall marks the context of an install's own exec: it runs while
// the install holds its sandbox (see EnterCall); its value is the box.
type installCall struct{}

// InstallContext is ctx as an install's own on b: it passes EnterCall's
// gate while the install holds b.
func InstallContext(ctx context.Context, b *Box) context.Context {
	return context.WithValue(ctx, installCall{}, b)
}

// jobOutput is the job output a call writes to, if it is a job's; nil for
// a file tool's work, which has no Output.
func jobOutput(out *run.Output) *run.JobOutput {
	if out == nil {
		return nil
	}
	return out.Combined()
}

// JobsOf tells which job outputs are background jobs' in a sandbox
// (jobs.Table).
type JobsOf interface {
	OutputsIn(sandboxID string) map[*run.JobOutput]bool
}

// Session is one MCP session (one client connection).
type Session struct {
	Owner      sandbox.Owner
	Ended      time.Time     // zero while live
	DefaultBox string        // container id of the session's default sandbox
	creating   chan struct{} // closed when the default sandbox's create in flight ends; nil when none
}

// Default is what target needs of a session's default sandbox: its id when
// it is registered; else the channel a create in flight closes when it
// ends (wait); else, for a session that started (known), the claim to
// create it (claim, non-nil: the caller creates it and calls Created).
func (r *Registry) Default(session string) (id string, wait <-chan struct{}, claim *Session, known bool) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	s := r.sessions[session]
	if s == nil {
		return "", nil, nil, false
	}
	if _, ok := r.boxes[s.DefaultBox]; ok {
		return s.DefaultBox, nil, nil, true
	}
	if s.creating != nil {
		return "", s.creating, nil, true
	}
	s.creating = make(chan struct{})
	return "", nil, s, true
}

// Created ends the create of s's default sandbox that Default gave the
// caller: id is the sandbox made, "" when the create failed.
func (r *Registry) Created(s *Session, id string) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if id != "" {
		s.DefaultBox = id
	}
	close(s.creating)
	s.creating = nil
}

// lookup resolves a sandbox reference: a full id, a unique id prefix of at
// least 4 characters, or a name. It never resolves containers Sandtray does
// not manage. Callers hold the lock (inside Locked).
func (r *Registry) lookup(ref string) (*Box, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("no sandbox_id given: %w", sandbox.ErrInvalid)
	}
	if b, ok := r.boxes[ref]; ok {
		return b, nil
	}
	var found *Box
	for id, b := range r.boxes {
		if b.Name == ref || (len(ref) >= 4 && strings.HasPrefix(id, ref)) {
			if found != nil && found != b {
				return nil, fmt.Errorf("sandbox %q is ambiguous; give more of the id or the name: %w", ref, sandbox.ErrInvalid)
			}
			found = b
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no sandbox %q; list_sandboxes shows the ones that exist: %w", ref, sandbox.ErrNotFound)
	}
	return found, nil
}

// Acquire resolves ref, marks the sandbox busy (so the reaper leaves it
// alone), counts the call in the engine's wait group and records its use.
// It refuses a sandbox being removed, and every sandbox once Close began.
// Pair with the engine's release (or releaseSoon).
func (r *Registry) Acquire(ref string) (*Box, error) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if r.closing {
		return nil, ErrClosing
	}
	b, err := r.lookup(ref)
	if err != nil {
		return nil, err
	}
	if b.Stage != Live {
		return nil, fmt.Errorf("sandbox %s is being removed (its session ended, it idled, or it was deleted); create a new one: %w", b.Name, sandbox.ErrNotFound)
	}
	r.wg.Add(1) // under regMu, before Close can see closing: see Registry.wg
	b.Busy++
	b.State.LastUsed = time.Now().UTC()
	return b, nil
}

// Done ends a call started by Acquire, and returns the sandbox's state to
// save and whether it is still registered.
func (r *Registry) Done(b *Box) (statedir.State, bool) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	b.Busy--
	r.wg.Done()
	_, live := r.boxes[b.ID]
	return b.State, live
}

// Enter counts work that holds no sandbox (a create) in
// wg, or refuses it once Close has begun. Pair with Leave.
func (r *Registry) Enter() error {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if r.closing {
		return ErrClosing
	}
	r.wg.Add(1) // under regMu, before Close can see closing: see Registry.wg
	return nil
}

// Close refuses new work from now on, cancels base (which stops the work
// under way) and waits for what is counted in wg.
func (r *Registry) Close() {
	r.regMu.Lock()
	r.closing = true
	r.regMu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// Bound returns ctx, cancelled also when the engine closes: what a call
// runs with.
func (r *Registry) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.base, cancel)
	return ctx, func() { stop(); cancel() }
}

// Info is the public view of b, with its port forwards and, while it runs,
// its stats. Callers hold the lock (inside Locked).
func (b *Box) Info(forwards []sandbox.PortForward, stats sandbox.Stats) sandbox.Info {
	if b.Status != sandbox.StatusRunning {
		stats = sandbox.Stats{}
	}
	return sandbox.Info{
		ID: b.ID, Name: b.Name, Image: b.Spec.Image, Status: b.Status,
		Persistent: b.State.Persistent, Owner: b.State.Owner,
		CreatedAt: b.Created, LastUsed: b.State.LastUsed, Spec: b.Spec, Stats: stats,
		Ports: forwards, EgressRules: b.State.Egress, SnapshotsChanged: b.Snaps,
	}
}

// Forwards lists a sandbox's port forwards (portfwd.Ports); its lock is a
// leaf, taken under r.regMu.
type Forwards interface {
	Forwards(id string) []sandbox.PortForward
}

// Stats is a sandbox's stats (stats.Sampler); its lock is a leaf, taken
// under r.regMu.
type Stats interface {
	Of(id string) sandbox.Stats
}

// ListLocked is every sandbox's public view, oldest first. Callers hold
// r.regMu.
func (r *Registry) ListLocked(ports Forwards, stats Stats) []sandbox.Info {
	out := make([]sandbox.Info, 0, len(r.boxes))
	for _, b := range r.boxes {
		out = append(out, b.Info(ports.Forwards(b.ID), stats.Of(b.ID)))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Running lists the ids of the running sandboxes.
func (r *Registry) Running() []string {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var ids []string
	for id, b := range r.boxes {
		if b.Status == sandbox.StatusRunning {
			ids = append(ids, id)
		}
	}
	return ids
}

// Pick marks b reaping when no call holds it, and reports whether it did:
// the caller then removes its container, and calls the engine's forget or Unpick.
// Callers hold the lock (inside Locked).
func (b *Box) Pick() bool {
	if b.Busy > 0 || b.Stage != Live {
		return false
	}
	b.Stage = Reaping
	return true
}

// Unpick makes a box whose removal failed usable again.
func (r *Registry) Unpick(b *Box) {
	r.regMu.Lock()
	if b.Stage == Reaping {
		b.Stage = Live
	}
	r.regMu.Unlock()
}

// Drop forgets a sandbox: whoever still holds its box holds a gone one.
func (r *Registry) Drop(id string) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if b := r.boxes[id]; b != nil {
		b.Stage = Gone
	}
	delete(r.boxes, id)
	for _, s := range r.sessions {
		if s.DefaultBox == id {
			s.DefaultBox = ""
		}
	}
}

// pruneSessionsLocked forgets the sessions that ended more than grace ago
// and own no sandbox: a long-running engine sees many. Callers hold the lock (inside Locked).
func (r *Registry) pruneSessionsLocked(now time.Time, grace time.Duration) {
	owned := map[string]bool{}
	for _, b := range r.boxes {
		owned[b.State.Owner.Session] = true
	}
	for id, s := range r.sessions {
		if !s.Ended.IsZero() && now.Sub(s.Ended) >= grace && !owned[id] && s.creating == nil {
			delete(r.sessions, id)
		}
	}
}

// Expired picks (see Pick) the ephemeral sandboxes due for removal at now:
// their session ended grace ago (a sandbox of no known session counts as
// one whose session ended at engine start), or they idled ttl. It prunes
// the sessions it no longer needs.
func (r *Registry) Expired(now, start time.Time, grace, ttl time.Duration) []*Box {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var out []*Box
	for _, b := range r.boxes {
		if b.State.Persistent {
			continue
		}
		ended := start
		if s, ok := r.sessions[b.State.Owner.Session]; ok {
			ended = s.Ended
		}
		sessionOver := !ended.IsZero() && now.Sub(ended) >= grace
		if (sessionOver || now.Sub(b.State.LastUsed) >= ttl) && b.Pick() {
			out = append(out, b) // reaping: no call can acquire it now
		}
	}
	r.pruneSessionsLocked(now, grace)
	return out
}

// Reserve holds a place for one new sandbox under limit (0: none),
// counting every sandbox (persistent and stopped ones too) and the creates
// under way, or refuses with a sentence that names limits.max_sandboxes and
// what to do. done gives the place back once the create has registered its
// sandbox (or failed).
func (r *Registry) Reserve(limit int) (done func(), err error) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if limit > 0 && len(r.boxes)+r.creating >= limit {
		return nil, fmt.Errorf("Sandtray already has %d sandboxes, the most limits.max_sandboxes allows (persistent and stopped ones count); "+
			"delete one you no longer need with delete_sandbox (list_sandboxes shows them), reuse one by its sandbox_id, or ask the user to raise limits.max_sandboxes in config.toml: %w",
			len(r.boxes), sandbox.ErrTooLarge)
	}
	r.creating++
	return func() {
		r.regMu.Lock()
		r.creating--
		r.regMu.Unlock()
	}, nil
}

// Ephemeral returns the sandboxes that are not persistent.
func (r *Registry) Ephemeral() []*Box {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var out []*Box
	for _, b := range r.boxes {
		if !b.State.Persistent {
			out = append(out, b)
		}
	}
	return out
}

// SessionStarted records a live session (again live, if it had ended).
func (r *Registry) SessionStarted(owner sandbox.Owner) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if s, ok := r.sessions[owner.Session]; ok {
		s.Owner, s.Ended = owner, time.Time{}
	} else {
		r.sessions[owner.Session] = &Session{Owner: owner}
	}
}

// SessionEnded marks a session ended now and asks the reaper for a pass
// (its sandboxes may be due); it never blocks.
func (r *Registry) SessionEnded(id string) {
	r.regMu.Lock()
	if s, ok := r.sessions[id]; ok {
		s.Ended = time.Now()
	}
	r.regMu.Unlock()
	select {
	case r.reap <- struct{}{}:
	default: // a pass is already due
	}
}

// LiveSessionsLocked counts the MCP sessions that have not ended. Callers
// hold the lock (inside Locked).
func (r *Registry) LiveSessionsLocked() int {
	n := 0
	for _, s := range r.sessions {
		if s.Ended.IsZero() {
			n++
		}
	}
	return n
}

// Locked runs fn with the registry's lock held: fn reads or changes the
// boxes and sessions (or the Engine's fields the lock also guards:
// watchers, paused, notices), takes no lock but a leaf's (see regMu), and
// makes no runtime call or disk write. Only this package takes the lock
// itself; the rest of the engine goes through Locked and the methods
// below.
func (r *Registry) Locked(fn func()) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	fn()
}

// WithRef resolves ref (see lookup) and runs fn on its box, with the lock
// held as Locked holds it.
func (r *Registry) WithRef(ref string, fn func(*Box) error) error {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	b, err := r.lookup(ref)
	if err != nil {
		return err
	}
	return fn(b)
}

// Resolve resolves ref as lookup does, taking the lock.
func (r *Registry) Resolve(ref string) (*Box, error) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	return r.lookup(ref)
}

// BoxOf returns the box of container id, when the registry has it.
func (r *Registry) BoxOf(id string) (*Box, bool) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	b, ok := r.boxes[id]
	return b, ok
}

// StatusOf returns b's status.
func (r *Registry) StatusOf(b *Box) sandbox.Status {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	return b.Status
}

// The install gate's side of the registry: what guard.go's holds and a
// call's entry change of a box, under the lock.

// EnterCall records a call in b.Calls (see the engine's guarded), and returns what ends
// the record. While an install holds b (HoldForInstall), a new call waits
// for it to end, or for ctx: the install's own exec alone goes in.
func (r *Registry) EnterCall(ctx context.Context, b *Box, cancel context.CancelCauseFunc, out *run.Output) (leave func(), err error) {
	for {
		r.regMu.Lock()
		w := b.gate.window
		if w == nil || ctx.Value(installCall{}) == b {
			r.callSeq++
			seq := r.callSeq
			if b.Calls == nil {
				b.Calls = map[uint64]context.CancelCauseFunc{}
			}
			b.Calls[seq] = cancel
			if jo := jobOutput(out); jo != nil {
				if b.gate.outs == nil {
					b.gate.outs = map[uint64]*run.JobOutput{}
				}
				b.gate.outs[seq] = jo
			}
			r.regMu.Unlock()
			return func() {
				r.regMu.Lock()
				delete(b.Calls, seq)
				delete(b.gate.outs, seq)
				r.regMu.Unlock()
			}, nil
		}
		b.gate.waiting++
		r.regMu.Unlock()
		select {
		case <-w:
			r.regMu.Lock()
			b.gate.waiting--
			r.regMu.Unlock()
		case <-ctx.Done():
			r.regMu.Lock()
			b.gate.waiting--
			r.regMu.Unlock()
			return nil, fmt.Errorf("sandbox %s is installing packages (install_packages), and no other call runs in it meanwhile; this one gave up waiting: %w", b.Name, ctx.Err())
		}
	}
}

// CallsWaiting counts the calls waiting for an install's hold on b to end.
func (r *Registry) CallsWaiting(b *Box) int {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	return b.gate.waiting
}

// HoldForInstall keeps new calls out of b (they wait in EnterCall) until
// release, and returns once the calls in flight in b have ended, but for
// background jobs (as jobs tells), which go on (the install stops their
// processes).
func (r *Registry) HoldForInstall(ctx context.Context, b *Box, jobs JobsOf) (release func(), err error) {
	w := make(chan struct{})
	r.regMu.Lock()
	if b.gate.window != nil { // installs take turns (LockInstall): never
		r.regMu.Unlock()
		return nil, fmt.Errorf("sandbox %s is already held for an install: %w", b.Name, sandbox.ErrConflict)
	}
	b.gate.window = w
	r.regMu.Unlock()
	release = sync.OnceFunc(func() {
		r.regMu.Lock()
		b.gate.window = nil
		r.regMu.Unlock()
		close(w)
	})
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		isJob := jobs.OutputsIn(b.ID) // before regMu: see its lock order
		r.regMu.Lock()
		foreground := 0
		for seq := range b.Calls {
			if jo := b.gate.outs[seq]; jo == nil || !isJob[jo] {
				foreground++
			}
		}
		r.regMu.Unlock()
		if foreground == 0 {
			return release, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			release()
			return nil, fmt.Errorf("waiting for the calls running in sandbox %s to end before the install: %w", b.Name, ctx.Err())
		}
	}
}

// LockInstall waits for b's install slot (see Box.install), or for ctx.
func (r *Registry) LockInstall(ctx context.Context, b *Box) (unlock func(), err error) {
	r.regMu.Lock()
	if b.install == nil {
		b.install = make(chan struct{}, 1)
	}
	slot := b.install
	r.regMu.Unlock()
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for another install in the same sandbox: %w", ctx.Err())
	}
}
