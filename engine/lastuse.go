package engine

import (
	"sync"
	"time"
)

// lastUseSaveDelay coalesces last-use saves: a sandbox in steady use is
// written once per delay, never once per call.
const lastUseSaveDelay = time.Second

// lastUse is the coalesced saving of sandboxes' last-use times that keeps
// warm calls off the disk: mark notes a sandbox, and save runs for each
// marked one at most once per lastUseSaveDelay, off the caller's path.
type lastUse struct {
	save func(id string) // writes one sandbox's state
	// flushing holds a token while a flush saves: a flush waits for the one
	// under way, so once Close's has returned nothing writes the state dir.
	flushing chan struct{}
	mu       sync.Mutex
	dirty    map[string]struct{} // guarded by mu: sandbox ids whose last use is not saved yet
	timer    *time.Timer         // guarded by mu: pending save of dirty, or nil
}

func newLastUse(save func(id string)) *lastUse {
	return &lastUse{save: save, dirty: map[string]struct{}{}, flushing: make(chan struct{}, 1)}
}

// mark schedules a save of id's state.
func (s *lastUse) mark(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirty[id] = struct{}{}
	if s.timer == nil {
		s.timer = time.AfterFunc(lastUseSaveDelay, s.flush)
	}
}

// flush saves the marked states now, once any flush under way is done.
func (s *lastUse) flush() {
	s.flushing <- struct{}{}
	defer func() { <-s.flushing }()
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = map[string]struct{}{}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	for id := range dirty {
		s.save(id)
	}
}
