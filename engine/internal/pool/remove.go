package pool

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Gone drops a spare that died or was removed behind the pool's back (the
// engine calls it on Docker's events), removing what is left of it. A
// container the pool does not hold is ignored.
func (p *Pool) Gone(ctx context.Context, id string) {
	if p == nil || len(p.takeOut(func(c pooled) bool { return c.id == id })) == 0 {
		return
	}
	p.removeOne(ctx, id) // died, not yet removed: a rare event, done at once
	p.changed()
	p.refill()
}

// takeOut takes the ready spares match selects out of the pool and returns
// their ids.
func (p *Pool) takeOut(match func(pooled) bool) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, s := range p.images {
		s.ready = slices.DeleteFunc(s.ready, func(c pooled) bool {
			if match(c) {
				ids = append(ids, c.id)
				return true
			}
			return false
		})
	}
	return ids
}

// Drain closes the pool and removes every container it made that was not
// handed out: those ready, and any a fill cut short left behind. Call it
// after Run has returned.
func (p *Pool) Drain(ctx context.Context) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	ids := map[string]bool{}
	for _, s := range p.images {
		for _, c := range s.ready {
			ids[c.id] = true
		}
		s.ready = nil
	}
	p.mu.Unlock()
	if list, err := p.docker.List(ctx, p.scope(), true); err == nil {
		for _, c := range list {
			if IsLeftover(c, p.scope()) {
				ids[c.ID] = true
			}
		}
	}
	p.RemoveAll(ctx, slices.Collect(maps.Keys(ids)))
}

// removeTimeout bounds removing one container a hand-out gave back.
const removeTimeout = 30 * time.Second

// removeOne removes a container taken from the pool but not handed out. It
// runs to its end even when ctx is done, so nothing is left behind.
func (p *Pool) removeOne(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	p.RemoveAll(ctx, []string{id})
}

// RemoveAll removes containers of the pool in parallel, and frees what the
// engine keeps about them.
func (p *Pool) RemoveAll(ctx context.Context, ids []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	RemoveAll(ctx, p.docker, p.kernels.Close, p.log, ids)
}

// RemoveAll removes pooled containers in parallel (a forced remove takes
// ~100 ms), calling forget for each first: also for the leftovers a crash
// of the same engine left, found before any pool exists. ids must be the
// engine's own (IsLeftover with its scope): another engine's spare may be
// about to become its sandbox.
func RemoveAll(ctx context.Context, d interface {
	Remove(ctx context.Context, id string) error
}, forget func(id string), log *slog.Logger, ids []string) {
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			forget(id) // its warm kernel, if any
			if err := d.Remove(ctx, id); err != nil {
				log.Warn("remove pooled container", "id", sandbox.ShortID(id), "err", err)
			}
		})
	}
	wg.Wait()
}
