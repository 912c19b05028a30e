package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// registry is the engine's sandboxes (boxes) and MCP sessions, and the gate
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
type registry struct {
	// regMu guards the fields below and every field of each box but its disk
	// (which has its own lock), and also the Engine's watchers, paused,
	// notices and noticeSeq. Lock order: only leaf locks are taken under regMu
	// (the pool's, probe.Watch's and the port table's, which the snapshot
	// reads); every other lock of the engine or of its packages (kernel.Set,
	// statedir.LastUse, the stats sampler, run.Disk, a box's install slot, the port
	// saves') is taken before regMu, never under it. regMu is never held across a
	// Docker call or a disk write. Only registry.go takes it, in the
	// registry's methods (locked, withRef, …): TestOnlyTheRegistryTakesItsLock.
	regMu    sync.Mutex
	boxes    map[string]*box // by container id
	sessions map[string]*session
	creating int           // creates under way, counted against limits.max_sandboxes
	callSeq  uint64        // numbers the calls in boxes' calls
	closing  bool          // Close has begun: enter, acquire and Create refuse
	reap     chan struct{} // buffer of one: a coalesced request for a reaper pass; not guarded
	// base is the engine's lifetime, the one root context of the engine:
	// its loops, calls, jobs and kernels derive from it, and close cancels
	// it (cancel). It outlives the ctx New was called with, which only
	// bounds the start-up. Set once by newRegistry.
	base   context.Context
	cancel context.CancelFunc
	// wg counts the background loops, every call from acquire (or enter) to
	// release, jobs included (a job holds its sandbox until it ends), and
	// every exec of the kernels. Add only under regMu while !closing, so that
	// once close has set closing, Wait sees every Add.
	wg sync.WaitGroup
}

func newRegistry() registry {
	// The one root: nothing outlives the engine, and the engine outlives
	// every caller's ctx.
	base, cancel := context.WithCancel(context.Background())
	return registry{boxes: map[string]*box{}, sessions: map[string]*session{}, reap: make(chan struct{}, 1),
		base: base, cancel: cancel}
}

// stage is where a box is in its life.
type stage int

const (
	live    stage = iota // usable
	reaping              // being removed (reaper or Delete): acquire refuses it
	gone                 // forgotten: whoever still holds it holds a stale record
)

// box is the engine's record of one sandbox; guarded by registry.regMu.
type box struct {
	id, name string
	spec     sandbox.Spec
	created  time.Time
	stage    stage
	status   sandbox.Status
	state    boxState
	activity []sandbox.Activity
	busy     int                                // calls in flight; a busy sandbox is never reaped
	stopping bool                               // stop_sandbox is stopping it: no call that its stop cuts starts it again
	oomKills int64                              // the cgroup's OOM-kill count when last read
	disk     run.Disk                           // what the disk watchdog keeps between calls; its own lock
	calls    map[uint64]context.CancelCauseFunc // the calls running in it, to stop them (see guarded)
	// install is the sandbox's install slot (capacity 1): installs take
	// turns, so one never takes the network away from another. Made on
	// first use; it goes with the box.
	install chan struct{}
	gate    installGate // keeps calls out while an install has it online (see enterCall)
	snaps   uint64      // counts the changes to its snapshots (Info.SnapshotsChanged)
}

// session is one MCP session (one client connection).
type session struct {
	owner      sandbox.Owner
	ended      time.Time     // zero while live
	defaultBox string        // container id of the session's default sandbox
	creating   chan struct{} // closed when the default sandbox's create in flight ends; nil when none
}

// lookup resolves a sandbox reference: a full id, a unique id prefix of at
// least 4 characters, or a name. It never resolves containers Sandtray does
// not manage. Callers hold r.regMu.
func (r *registry) lookup(ref string) (*box, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("no sandbox_id given: %w", sandbox.ErrInvalid)
	}
	if b, ok := r.boxes[ref]; ok {
		return b, nil
	}
	var found *box
	for id, b := range r.boxes {
		if b.name == ref || (len(ref) >= 4 && strings.HasPrefix(id, ref)) {
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

// acquire resolves ref, marks the sandbox busy (so the reaper leaves it
// alone), counts the call in the engine's wait group and records its use.
// It refuses a sandbox being removed, and every sandbox once Close began.
// Pair with release (or releaseSoon).
func (r *registry) acquire(ref string) (*box, error) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if r.closing {
		return nil, errClosing
	}
	b, err := r.lookup(ref)
	if err != nil {
		return nil, err
	}
	if b.stage != live {
		return nil, fmt.Errorf("sandbox %s is being removed (its session ended, it idled, or it was deleted); create a new one: %w", b.name, sandbox.ErrNotFound)
	}
	r.wg.Add(1) // under regMu, before close can see closing: see registry.wg
	b.busy++
	b.state.LastUsed = time.Now().UTC()
	return b, nil
}

// done ends a call started by acquire, and returns the sandbox's state to
// save and whether it is still registered.
func (r *registry) done(b *box) (boxState, bool) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	b.busy--
	r.wg.Done()
	_, live := r.boxes[b.id]
	return b.state, live
}

// enter counts work that holds no sandbox (a create) in
// wg, or refuses it once Close has begun. Pair with r.wg.Done.
func (r *registry) enter() error {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if r.closing {
		return errClosing
	}
	r.wg.Add(1) // under regMu, before close can see closing: see registry.wg
	return nil
}

// close refuses new work from now on, cancels base (which stops the work
// under way) and waits for what is counted in wg.
func (r *registry) close() {
	r.regMu.Lock()
	r.closing = true
	r.regMu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// bound returns ctx, cancelled also when the engine closes: what a call
// runs with.
func (r *registry) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.base, cancel)
	return ctx, func() { stop(); cancel() }
}

// release ends a call started by acquire and saves the last-use time.
func (e *Engine) release(b *box) {
	if st, live := e.done(b); live {
		e.store.SaveStateOrWarn(e.log, b.id, st)
	}
}

// releaseSoon ends a call started by acquire, like release, but saves the
// last-use time later, coalesced, off the caller's path.
func (e *Engine) releaseSoon(b *box) {
	e.done(b)
	e.saves.Mark(b.id)
}

// saveState writes a registered sandbox's state (see statedir.LastUse).
func (e *Engine) saveState(id string) {
	e.regMu.Lock()
	b, live := e.boxes[id]
	var st boxState
	if live {
		st = b.state
	}
	e.regMu.Unlock()
	if live {
		e.store.SaveStateOrWarn(e.log, id, st)
	}
}

// changeState applies change to a sandbox's state under the registry's lock and saves it at
// once, unless the sandbox is gone; what names the change in a failure's log.
func (e *Engine) changeState(b *box, what string, change func(*boxState)) {
	var st boxState
	live := false
	e.locked(func() {
		change(&b.state)
		st = b.state
		_, live = e.boxes[b.id]
	})
	if !live {
		return
	}
	if err := e.store.Save(b.id, st); err != nil {
		e.log.Error("save "+what, "sandbox", b.name, "err", err)
	}
}

// info is the public view of b, with its port forwards and, while it runs,
// its stats. Callers hold r.regMu.
func (b *box) info(forwards []sandbox.PortForward, stats sandbox.Stats) sandbox.Info {
	if b.status != sandbox.StatusRunning {
		stats = sandbox.Stats{}
	}
	return sandbox.Info{
		ID: b.id, Name: b.name, Image: b.spec.Image, Status: b.status,
		Persistent: b.state.Persistent, Owner: b.state.Owner,
		CreatedAt: b.created, LastUsed: b.state.LastUsed, Spec: b.spec, Stats: stats,
		Ports: forwards, EgressRules: b.state.Egress, SnapshotsChanged: b.snaps,
	}
}

// forwardsOf lists a sandbox's port forwards (portfwd.Ports); its lock is a
// leaf, taken under r.regMu.
type forwardsOf interface {
	Forwards(id string) []sandbox.PortForward
}

// statsOf is a sandbox's stats (stats.Sampler); its lock is a leaf, taken
// under r.regMu.
type statsOf interface {
	Of(id string) sandbox.Stats
}

// listLocked is every sandbox's public view, oldest first. Callers hold
// r.regMu.
func (r *registry) listLocked(ports forwardsOf, stats statsOf) []sandbox.Info {
	out := make([]sandbox.Info, 0, len(r.boxes))
	for _, b := range r.boxes {
		out = append(out, b.info(ports.Forwards(b.id), stats.Of(b.id)))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// running lists the ids of the running sandboxes.
func (r *registry) running() []string {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var ids []string
	for id, b := range r.boxes {
		if b.status == sandbox.StatusRunning {
			ids = append(ids, id)
		}
	}
	return ids
}

// pick marks b reaping when no call holds it, and reports whether it did:
// the caller then removes its container, and calls forget or unpick.
// Callers hold r.regMu.
func (b *box) pick() bool {
	if b.busy > 0 || b.stage != live {
		return false
	}
	b.stage = reaping
	return true
}

// unpick makes a box whose removal failed usable again.
func (r *registry) unpick(b *box) {
	r.regMu.Lock()
	if b.stage == reaping {
		b.stage = live
	}
	r.regMu.Unlock()
}

// drop forgets a sandbox: whoever still holds its box holds a gone one.
func (r *registry) drop(id string) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if b := r.boxes[id]; b != nil {
		b.stage = gone
	}
	delete(r.boxes, id)
	for _, s := range r.sessions {
		if s.defaultBox == id {
			s.defaultBox = ""
		}
	}
}

// forget drops a sandbox from memory and the state dir, and closes its
// port forwards.
func (e *Engine) forget(id string) {
	e.regMu.Lock()
	var image string
	if b, ok := e.boxes[id]; ok {
		image = b.spec.Image
	}
	e.regMu.Unlock()
	defer e.snap.Drop(id, image) // engine/internal/snapshot
	e.kernels.Close(id)
	e.networkPart.EgressDown(id)
	e.drop(id)
	// Its host ports close now, not when the runtime's event of the
	// container's end arrives: whoever was told it is gone may reuse them.
	e.ports.RemoveBox(id)
	e.stats.Forget(id)
	e.store.Remove(id)
	e.publish()
}

// target acquires ref (see acquire), or the session's default sandbox when
// ref is "", creating that on first use with the image for language (see
// the top of this file).
func (e *Engine) target(ctx context.Context, owner sandbox.Owner, ref, language string) (*box, error) {
	if ref != "" {
		return e.acquire(ref)
	}
	for {
		e.regMu.Lock()
		s := e.sessions[owner.Session]
		var id string
		var wait chan struct{}
		if s != nil {
			if _, ok := e.boxes[s.defaultBox]; ok {
				id = s.defaultBox
			}
			wait = s.creating
		}
		mine := s != nil && id == "" && wait == nil
		if mine {
			s.creating = make(chan struct{})
		}
		e.regMu.Unlock()
		switch {
		case id != "":
			return e.acquire(id) // the warm path
		case s == nil: // a session never started: nothing to remember it by
			return e.createDefault(ctx, owner, nil, language)
		case mine:
			return e.createDefault(ctx, owner, s, language)
		}
		select {
		case <-wait: // made (or failed) by a concurrent first call: look again
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for this session's sandbox to be created: %w", ctx.Err())
		}
	}
}

// createDefault creates the default sandbox of s (nil: of no session) and
// acquires it.
func (e *Engine) createDefault(ctx context.Context, owner sandbox.Owner, s *session, language string) (*box, error) {
	info, err := e.Create(ctx, owner, sandbox.CreateRequest{Language: language}, nil)
	if s != nil {
		e.regMu.Lock()
		if err == nil {
			s.defaultBox = info.ID
		}
		close(s.creating)
		s.creating = nil
		e.regMu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return e.acquire(info.ID)
}

// pruneSessionsLocked forgets the sessions that ended more than grace ago
// and own no sandbox: a long-running engine sees many. Callers hold r.regMu.
func (r *registry) pruneSessionsLocked(now time.Time, grace time.Duration) {
	owned := map[string]bool{}
	for _, b := range r.boxes {
		owned[b.state.Owner.Session] = true
	}
	for id, s := range r.sessions {
		if !s.ended.IsZero() && now.Sub(s.ended) >= grace && !owned[id] && s.creating == nil {
			delete(r.sessions, id)
		}
	}
}

// expired picks (see pick) the ephemeral sandboxes due for removal at now:
// their session ended grace ago (a sandbox of no known session counts as
// one whose session ended at engine start), or they idled ttl. It prunes
// the sessions it no longer needs.
func (r *registry) expired(now, start time.Time, grace, ttl time.Duration) []*box {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var out []*box
	for _, b := range r.boxes {
		if b.state.Persistent {
			continue
		}
		ended := start
		if s, ok := r.sessions[b.state.Owner.Session]; ok {
			ended = s.ended
		}
		sessionOver := !ended.IsZero() && now.Sub(ended) >= grace
		if (sessionOver || now.Sub(b.state.LastUsed) >= ttl) && b.pick() {
			out = append(out, b) // reaping: no call can acquire it now
		}
	}
	r.pruneSessionsLocked(now, grace)
	return out
}

// reserve holds a place for one new sandbox under limit (0: none),
// counting every sandbox (persistent and stopped ones too) and the creates
// under way, or refuses with a sentence that names limits.max_sandboxes and
// what to do. done gives the place back once the create has registered its
// sandbox (or failed).
func (r *registry) reserve(limit int) (done func(), err error) {
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

// ephemeral returns the sandboxes that are not persistent.
func (r *registry) ephemeral() []*box {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var out []*box
	for _, b := range r.boxes {
		if !b.state.Persistent {
			out = append(out, b)
		}
	}
	return out
}

// sessionStarted records a live session (again live, if it had ended).
func (r *registry) sessionStarted(owner sandbox.Owner) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	if s, ok := r.sessions[owner.Session]; ok {
		s.owner, s.ended = owner, time.Time{}
	} else {
		r.sessions[owner.Session] = &session{owner: owner}
	}
}

// sessionEnded marks a session ended now and asks the reaper for a pass
// (its sandboxes may be due); it never blocks.
func (r *registry) sessionEnded(id string) {
	r.regMu.Lock()
	if s, ok := r.sessions[id]; ok {
		s.ended = time.Now()
	}
	r.regMu.Unlock()
	select {
	case r.reap <- struct{}{}:
	default: // a pass is already due
	}
}

// liveSessionsLocked counts the MCP sessions that have not ended. Callers
// hold r.regMu.
func (r *registry) liveSessionsLocked() int {
	n := 0
	for _, s := range r.sessions {
		if s.ended.IsZero() {
			n++
		}
	}
	return n
}

// locked runs fn with the registry's lock held: fn reads or changes the
// boxes and sessions (or the Engine's fields the lock also guards:
// watchers, paused, notices), takes no lock but a leaf's (see regMu), and
// makes no runtime call or disk write. Only this file takes the lock
// itself; the rest of the engine goes through locked and the methods
// below.
func (r *registry) locked(fn func()) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	fn()
}

// withRef resolves ref (see lookup) and runs fn on its box, with the lock
// held as locked holds it.
func (r *registry) withRef(ref string, fn func(*box) error) error {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	b, err := r.lookup(ref)
	if err != nil {
		return err
	}
	return fn(b)
}

// resolve resolves ref as lookup does, taking the lock.
func (r *registry) resolve(ref string) (*box, error) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	return r.lookup(ref)
}

// boxOf returns the box of container id, when the registry has it.
func (r *registry) boxOf(id string) (*box, bool) {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	b, ok := r.boxes[id]
	return b, ok
}

// statusOf returns b's status.
func (r *registry) statusOf(b *box) sandbox.Status {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	return b.status
}

// The install gate's side of the registry: what guard.go's holds and a
// call's entry change of a box, under the lock.

// enterCall records a call in b.calls (see guarded), and returns what ends
// the record. While an install holds b (holdForInstall), a new call waits
// for it to end, or for ctx: the install's own exec alone goes in.
func (r *registry) enterCall(ctx context.Context, b *box, cancel context.CancelCauseFunc, out *run.Output) (leave func(), err error) {
	for {
		r.regMu.Lock()
		w := b.gate.window
		if w == nil || ctx.Value(installCall{}) == b {
			r.callSeq++
			seq := r.callSeq
			if b.calls == nil {
				b.calls = map[uint64]context.CancelCauseFunc{}
			}
			b.calls[seq] = cancel
			if jo := jobOutput(out); jo != nil {
				if b.gate.outs == nil {
					b.gate.outs = map[uint64]*run.JobOutput{}
				}
				b.gate.outs[seq] = jo
			}
			r.regMu.Unlock()
			return func() {
				r.regMu.Lock()
				delete(b.calls, seq)
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
			return nil, fmt.Errorf("sandbox %s is installing packages (install_packages), and no other call runs in it meanwhile; this one gave up waiting: %w", b.name, ctx.Err())
		}
	}
}

// callsWaiting counts the calls waiting for an install's hold on b to end.
func (r *registry) callsWaiting(b *box) int {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	return b.gate.waiting
}

// holdForInstall keeps new calls out of b (they wait in enterCall) until
// release, and returns once the calls in flight in b have ended, but for
// background jobs (as jobs tells), which go on (the install stops their
// processes).
func (r *registry) holdForInstall(ctx context.Context, b *box, jobs jobsOf) (release func(), err error) {
	w := make(chan struct{})
	r.regMu.Lock()
	if b.gate.window != nil { // installs take turns (lockInstall): never
		r.regMu.Unlock()
		return nil, fmt.Errorf("sandbox %s is already held for an install: %w", b.name, sandbox.ErrConflict)
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
		isJob := jobs.OutputsIn(b.id) // before regMu: see its lock order
		r.regMu.Lock()
		foreground := 0
		for seq := range b.calls {
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
			return nil, fmt.Errorf("waiting for the calls running in sandbox %s to end before the install: %w", b.name, ctx.Err())
		}
	}
}

// lockInstall waits for b's install slot (see box.install), or for ctx.
func (r *registry) lockInstall(ctx context.Context, b *box) (unlock func(), err error) {
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
