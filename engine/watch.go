package engine

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Watcher receives the engine's snapshots. The engine never blocks on a slow
// watcher: each holds at most one pending snapshot, and a newer one replaces it.
type Watcher struct {
	ch chan sandbox.Snapshot
}

// Watch registers a watcher that receives the current snapshot at once and a
// new one after every change, until ctx is done.
func (e *Engine) Watch(ctx context.Context) *Watcher {
	w := &Watcher{ch: make(chan sandbox.Snapshot, 1)}
	e.reg.Locked(func() {
		e.watchers[w] = struct{}{}
		w.offer(e.snapshotLocked())
	})
	context.AfterFunc(ctx, func() {
		e.reg.Locked(func() { delete(e.watchers, w) })
	})
	return w
}

// Next returns the newest snapshot not yet received, waiting for one. It
// returns ctx's error when ctx is done first.
func (w *Watcher) Next(ctx context.Context) (sandbox.Snapshot, error) {
	select {
	case s := <-w.ch:
		return s, nil
	case <-ctx.Done():
		return sandbox.Snapshot{}, ctx.Err()
	}
}

// offer replaces any pending snapshot with s. Only the engine sends, under
// the registry's lock, so the drain-then-send cannot race with another sender.
func (w *Watcher) offer(s sandbox.Snapshot) {
	select {
	case <-w.ch:
	default:
	}
	w.ch <- s
}

func (e *Engine) snapshotLocked() sandbox.Snapshot {
	return sandbox.Snapshot{
		Time: time.Now(), Paused: e.paused, Sandboxes: e.reg.ListLocked(e.ports, e.stats), Docker: e.runtimeStatus(),
		Sessions: e.reg.LiveSessionsLocked(), Notices: append([]sandbox.Notice(nil), e.notices...),
		Pool:   e.PoolStatus(),                // the pool's lock is a leaf: safe under regMu
		Egress: e.networkPart.EgressPending(), // so is the gate's
	}
}

// publish sends a fresh snapshot to every watcher.
func (e *Engine) publish() {
	e.reg.Locked(func() {
		if len(e.watchers) == 0 {
			return
		}
		s := e.snapshotLocked()
		for w := range e.watchers {
			w.offer(s)
		}
	})
}
