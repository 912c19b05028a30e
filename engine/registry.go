package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The registry: the engine's sandboxes (boxes) and MCP sessions, all
// guarded by Engine.mu (see its comment for the lock order).
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

// stage is where a box is in its life.
type stage int

const (
	live    stage = iota // usable
	reaping              // being removed (reaper or Delete): acquire refuses it
	gone                 // forgotten: whoever still holds it holds a stale record
)

// box is the engine's record of one sandbox; guarded by Engine.mu.
type box struct {
	id, name string
	spec     sandbox.Spec
	created  time.Time
	stage    stage
	status   sandbox.Status
	state    boxState
	stats    sandbox.Stats
	prev     docker.StatsSample // last raw sample, for CPU %
	activity []sandbox.Activity
	busy     int                                // calls in flight; a busy sandbox is never reaped
	oomKills int64                              // the cgroup's OOM-kill count when last read
	disk     run.Disk                           // what the disk watchdog keeps between calls; its own lock
	calls    map[uint64]context.CancelCauseFunc // the calls running in it, to stop them (see guarded)
	// install is the sandbox's install slot (capacity 1): installs take
	// turns, so one never takes the network away from another. Made on
	// first use; it goes with the box.
	install chan struct{}
	gate    installGate // keeps calls out while an install has it online (see enterCall)
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
// not manage. Callers hold e.mu.
func (e *Engine) lookup(ref string) (*box, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("no sandbox_id given: %w", sandbox.ErrInvalid)
	}
	if b, ok := e.boxes[ref]; ok {
		return b, nil
	}
	var found *box
	for id, b := range e.boxes {
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
func (e *Engine) acquire(ref string) (*box, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		return nil, errClosing
	}
	b, err := e.lookup(ref)
	if err != nil {
		return nil, err
	}
	if b.stage != live {
		return nil, fmt.Errorf("sandbox %s is being removed (its session ended, it idled, or it was deleted); create a new one: %w", b.name, sandbox.ErrNotFound)
	}
	e.wg.Add(1) // under mu, before Close can see closing: see Engine.wg
	b.busy++
	b.state.LastUsed = time.Now().UTC()
	return b, nil
}

// release ends a call started by acquire and saves the last-use time.
func (e *Engine) release(b *box) {
	e.mu.Lock()
	b.busy--
	e.wg.Done()
	st := b.state
	_, live := e.boxes[b.id]
	e.mu.Unlock()
	if live {
		if err := e.store.save(b.id, st); err != nil {
			e.log.Warn("save sandbox state", "id", short(b.id), "err", err)
		}
	}
}

// pick marks b reaping when no call holds it, and reports whether it did:
// the caller then removes its container, and calls forget or unpick.
// Callers hold e.mu.
func (b *box) pick() bool {
	if b.busy > 0 || b.stage != live {
		return false
	}
	b.stage = reaping
	return true
}

// unpick makes a box whose removal failed usable again.
func (e *Engine) unpick(b *box) {
	e.mu.Lock()
	if b.stage == reaping {
		b.stage = live
	}
	e.mu.Unlock()
}

// forget drops a sandbox from memory and the state dir.
func (e *Engine) forget(id string) {
	e.kernels.Close(id)
	e.mu.Lock()
	if b := e.boxes[id]; b != nil {
		b.stage = gone
	}
	delete(e.boxes, id)
	for _, s := range e.sessions {
		if s.defaultBox == id {
			s.defaultBox = ""
		}
	}
	e.mu.Unlock()
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
		e.mu.Lock()
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
		e.mu.Unlock()
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
		e.mu.Lock()
		if err == nil {
			s.defaultBox = info.ID
		}
		close(s.creating)
		s.creating = nil
		e.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return e.acquire(info.ID)
}

// pruneSessionsLocked forgets the sessions that ended more than grace ago
// and own no sandbox: a long-running engine sees many. Callers hold e.mu.
func (e *Engine) pruneSessionsLocked(now time.Time, grace time.Duration) {
	owned := map[string]bool{}
	for _, b := range e.boxes {
		owned[b.state.Owner.Session] = true
	}
	for id, s := range e.sessions {
		if !s.ended.IsZero() && now.Sub(s.ended) >= grace && !owned[id] && s.creating == nil {
			delete(e.sessions, id)
		}
	}
}
