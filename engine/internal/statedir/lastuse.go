package statedir

import (
	"sync"
	"time"
)

// LastUseSaveDelay coalesces last-use saves: a sandbox in steady use is
// written once per delay, never once per call.
const LastUseSaveDelay = time.Second

// LastUse is the coalesced saving of sandboxes' last-use times that keeps
// warm calls off the disk: Mark notes a sandbox, and save runs for each
// marked one at most once per LastUseSaveDelay, off the caller's path.
type LastUse struct {
	save func(id string) // writes one sandbox's state
	// flushing holds a token while a flush saves: a flush waits for the one
	// under way, so once the engine's Close has flushed, nothing writes the
	// state dir.
	flushing chan struct{}
	mu       sync.Mutex
	dirty    map[string]struct{} // guarded by mu: sandbox ids whose last use is not saved yet
	timer    *time.Timer         // guarded by mu: pending save of dirty, or nil
}

// NewLastUse returns the coalesced saves of last-use times, each through
// save.
func NewLastUse(save func(id string)) *LastUse {
	return &LastUse{save: save, dirty: map[string]struct{}{}, flushing: make(chan struct{}, 1)}
}

// Mark schedules a save of id's state.
func (s *LastUse) Mark(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirty[id] = struct{}{}
	if s.timer == nil {
		s.timer = time.AfterFunc(LastUseSaveDelay, s.Flush)
	}
}

// Flush saves the marked states now, once any flush under way is done.
func (s *LastUse) Flush() {
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
