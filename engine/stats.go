package engine

import (
	"github.com/sandtray/sandtray/engine/internal/stats"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// ShowStats says which sandboxes' CPU and memory someone shows now (the
// GUI: the rows in view; none while its window is closed). They are read
// at once when their figures are ten seconds old, then every ten seconds,
// and published as they change; every other sandbox's are left as last
// read. It never blocks.
func (e *Engine) ShowStats(ids []string) { e.stats.Show(ids) }

// FollowStats says which one sandbox someone watches closely (the GUI: the
// selected one, with its charts; "" for none, as while the window is
// closed): its stats are streamed from Docker, a sample a second, and
// published as they change. It never blocks.
func (e *Engine) FollowStats(id string) { e.stats.Follow(id) }

// statsSink is the registry as the stats sampler sees it.
type statsSink struct{ e *Engine }

func (s statsSink) Running(id string) bool {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	b, ok := s.e.boxes[id]
	return ok && b.status == sandbox.StatusRunning
}

// Sampled stores a sample in a running sandbox's box.
func (s statsSink) Sampled(id string, smp runtime.StatsSample) bool {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	b, ok := s.e.boxes[id]
	if !ok || b.status != sandbox.StatusRunning {
		return false
	}
	next := stats.Next(b.prev, smp)
	changed := stats.VisiblyDifferent(b.stats, next)
	b.stats, b.prev = next, smp
	return changed
}

func (s statsSink) Publish() { s.e.publish() }
