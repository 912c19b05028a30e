package engine

import (
	"sync"
	"time"
)

// lastUseSaveDelay coalesces last-use saves: a sandbox in steady use is
// written once per delay, never once per call.
const lastUseSaveDelay = time.Second

// lastUse is the coalesced saving of sandboxes' last-use times that keeps
// warm calls off the disk.
type lastUse struct {
	mu    sync.Mutex
	dirty map[string]struct{} // guarded by mu: sandbox ids whose last use is not saved yet
	timer *time.Timer         // guarded by mu: pending save of dirty, or nil
}

func newLastUse() *lastUse { return &lastUse{dirty: map[string]struct{}{}} }

// releaseSoon ends a call started by acquire, like release, but saves the
// last-use time later, coalesced, off the caller's path.
func (e *Engine) releaseSoon(b *box) {
	e.done(b)
	s := e.saves
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirty[b.id] = struct{}{}
	if s.timer == nil {
		s.timer = time.AfterFunc(lastUseSaveDelay, func() { s.flush(e) })
	}
}

// flush writes the pending last-use times now.
func (s *lastUse) flush(e *Engine) {
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = map[string]struct{}{}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	for id := range dirty {
		e.mu.Lock()
		b, live := e.boxes[id]
		var st boxState
		if live {
			st = b.state
		}
		e.mu.Unlock()
		if !live {
			continue
		}
		if err := e.store.save(id, st); err != nil {
			e.log.Warn("save sandbox state", "id", short(id), "err", err)
		}
	}
}
