package pool

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newTestPool is a pool with a clock the test moves; nothing runs.
func newTestPool(cfg Config, now *time.Time) *Pool {
	p := New(cfg, nil, nil, nil, slog.New(slog.DiscardHandler))
	p.now = func() time.Time { return *now }
	return p
}

func TestAllocateLearnsBurstsAndIdles(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := newTestPool(Config{Size: 2, Images: []string{"default"}, MaxTotal: 8, MemoryMB: 1024, Idle: 10 * time.Minute}, &now)
	alloc := func() map[string]int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.allocate(p.now())
	}
	if diff := cmp.Diff(map[string]int{"default": 2}, alloc()); diff != "" {
		t.Errorf("before any use (-want +got):\n%s", diff)
	}
	p.Note("other")
	for range 5 {
		p.Note("default")
		now = now.Add(time.Second)
	}
	if diff := cmp.Diff(map[string]int{"default": 5, "other": 2}, alloc()); diff != "" {
		t.Errorf("after a burst of five and one use of another image (-want +got):\n%s", diff)
	}
	now = now.Add(9 * time.Minute)
	if got := alloc()["default"]; got != 5 {
		t.Errorf("9 minutes after the burst the default image has %d, want 5 still", got)
	}
	now = now.Add(2 * time.Minute)
	if diff := cmp.Diff(map[string]int{"default": 2}, alloc()); diff != "" {
		t.Errorf("after idling past pool.idle (-want +got):\n%s", diff)
	}
}

func TestAllocateStaysWithinBudget(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := newTestPool(Config{Size: 2, Images: []string{"default"}, MaxTotal: 5, MemoryMB: 1024, Idle: 10 * time.Minute}, &now)
	for _, img := range []string{"a", "b", "default", "default", "default", "default"} {
		p.Note(img)
		now = now.Add(time.Second)
	}
	p.mu.Lock()
	got := p.allocate(now)
	p.mu.Unlock()
	// default first (configured, 2), then the most recently used (b, a) get
	// their 2 while the total allows, before any burst beyond pool.size.
	if diff := cmp.Diff(map[string]int{"default": 2, "b": 2, "a": 1}, got); diff != "" {
		t.Errorf("max_total 5 (-want +got):\n%s", diff)
	}

	p.mu.Lock()
	p.images["default"].memory = 200 << 20
	p.images["a"].memory = 200 << 20
	p.images["b"].memory = 200 << 20
	p.cfg.MemoryMB = 700
	got = p.allocate(now)
	p.mu.Unlock()
	if diff := cmp.Diff(map[string]int{"default": 2, "b": 1}, got); diff != "" {
		t.Errorf("700 MB for spares of 200 MB each (-want +got):\n%s", diff)
	}
}
