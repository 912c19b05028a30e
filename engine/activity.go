package engine

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// inputKept caps the command or code stored with an activity entry.
const inputKept = 64 << 10

// record appends an activity entry to a sandbox's log, in memory and on disk.
func (e *Engine) record(id string, a sandbox.Activity) {
	if a.Time.IsZero() {
		a.Time = time.Now().UTC()
	}
	a.Input = capString(a.Input, inputKept)
	e.mu.Lock()
	b, ok := e.boxes[id]
	if ok {
		b.activity = append(b.activity, a)
		if len(b.activity) > activityKept {
			b.activity = append(b.activity[:0:0], b.activity[len(b.activity)-activityKept:]...)
		}
	}
	e.mu.Unlock()
	if !ok {
		return
	}
	if err := e.store.appendActivity(id, a); err != nil {
		e.log.Warn("write activity log", "id", short(id), "err", err)
	}
	e.publish()
}

// Logs returns the last tail entries of a sandbox's activity log (all when
// tail <= 0), oldest first.
func (e *Engine) Logs(ctx context.Context, ref string, tail int) ([]sandbox.Activity, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.lookup(ref)
	if err != nil {
		return nil, err
	}
	acts := b.activity
	if tail > 0 && len(acts) > tail {
		acts = acts[len(acts)-tail:]
	}
	return append([]sandbox.Activity(nil), acts...), nil
}

// capString cuts s to at most n bytes without splitting a UTF-8 sequence.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
