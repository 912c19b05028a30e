package engine

import (
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

// statsRunning reports whether sandbox id runs: the stats sampler reads
// and keeps only those.
func (e *Engine) statsRunning(id string) bool {
	running := false
	e.reg.Locked(func() {
		b, ok := e.reg.BoxesLocked()[id]
		running = ok && b.Status == sandbox.StatusRunning
	})
	return running
}
