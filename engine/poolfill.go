package engine

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// poolMaxBackoff caps the wait between fill attempts that keep failing (a
// missing image, a daemon that is down), so a broken pool costs little.
const poolMaxBackoff = time.Minute

// poolLoop keeps the pool full: it fills after every take and, each tick,
// drops containers that died and retries failed fills. It is the only
// goroutine that fills, so fills never race one another. It does not return
// until ctx is done.
func (e *Engine) poolLoop(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	var retryAt time.Time
	backoff, lastErr := tick, ""
	for {
		if time.Now().After(retryAt) {
			if err := e.fillPool(ctx); err != nil && ctx.Err() == nil {
				retryAt = time.Now().Add(backoff)
				backoff = min(2*backoff, poolMaxBackoff)
				if err.Error() != lastErr {
					e.log.Warn("warm pool: cannot fill; new sandboxes start cold", "err", err)
					lastErr = err.Error()
				}
			} else if err == nil {
				backoff, lastErr = tick, ""
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-e.pool.kick:
		case <-t.C:
			e.prunePool(ctx)
		}
	}
}

// fillPool creates pooled containers, one at a time, until every image has
// its share or a fill fails.
func (e *Engine) fillPool(ctx context.Context) error {
	for ctx.Err() == nil {
		image, ok := e.pool.underfilled()
		if !ok {
			return nil
		}
		if err := e.fillOne(ctx, image); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// underfilled returns an image whose pool is below its size.
func (p *pool) underfilled() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, img := range p.images {
		if !p.closed && len(p.ready[img]) < p.size {
			return img, true
		}
	}
	return "", false
}

// fillTimeout bounds creating and starting one pooled container.
const fillTimeout = time.Minute

// fillOne creates and starts one pooled container of image. It never pulls:
// a missing image fails here and is retried later, quietly. A fill runs to
// its end even when ctx is done: a create cancelled mid-call can still
// happen in the daemon, leaving a container nobody knows of. Close waits for
// it and then removes it with the rest of the pool.
func (e *Engine) fillOne(ctx context.Context, image string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fillTimeout)
	defer cancel()
	spec := e.pool.specs[image]
	labels, err := e.sandboxLabels(spec, time.Now().UTC())
	if err != nil {
		return err
	}
	labels[sandbox.LabelPool] = e.pool.instance
	name := "sb-" + randomHex(3)
	id, err := e.docker.Create(ctx, e.createOptions(poolPrefix+name, name, spec, labels))
	if err != nil {
		return err
	}
	if err := e.startOrRemove(ctx, id, image); err != nil {
		return err
	}
	if err := e.warmKernel(ctx, id, spec.Workdir, poolKernel); err != nil && !errors.Is(err, errNoKernel) {
		e.removePooled(id)
		return err
	}
	e.keepPooled(pooled{id: id, name: name, image: image})
	return nil
}

// poolKernel is the language whose kernel every pooled container starts
// ahead of time: execute_code's default. The first result of a sandbox taken
// from the pool then skips the kernel's start, and the interpreter's first
// start in a new container, which is the slow one (with the fuse-overlayfs
// storage driver, for one, each container reads the image's files through a
// mount of its own, with a cold cache). Kernels are keyed by container id,
// which the hand-out keeps.
const poolKernel = "python"

// prunePool drops the pooled containers that are gone or no longer running
// (killed or removed outside Sandtray), so they are never handed out.
func (e *Engine) prunePool(ctx context.Context) {
	if ready, _ := e.PoolReady(); ready == 0 {
		return
	}
	list, err := e.docker.List(ctx, e.poolScope(), true)
	if err != nil {
		return
	}
	state := map[string]string{}
	for _, c := range list {
		state[c.ID] = c.State
	}
	var dead []string
	e.pool.mu.Lock()
	for img, cs := range e.pool.ready {
		var alive []pooled
		for _, c := range cs {
			if state[c.id] == "running" {
				alive = append(alive, c)
			} else {
				dead = append(dead, c.id)
			}
		}
		e.pool.ready[img] = alive
	}
	e.pool.mu.Unlock()
	e.removeAll(ctx, dead)
	if len(dead) > 0 {
		e.pool.refill()
	}
}

// poolScope selects this engine's pooled containers.
func (e *Engine) poolScope() map[string]string {
	s := e.scope()
	s[sandbox.LabelPool] = e.pool.instance
	return s
}

// drainPool closes the pool and removes every container it made that was not
// handed out: those ready, and any a fill cut short left behind.
func (e *Engine) drainPool(ctx context.Context) {
	if e.pool == nil {
		return
	}
	e.pool.mu.Lock()
	e.pool.closed = true
	ids := map[string]bool{}
	for _, cs := range e.pool.ready {
		for _, c := range cs {
			ids[c.id] = true
		}
	}
	clear(e.pool.ready)
	e.pool.mu.Unlock()
	if list, err := e.docker.List(ctx, e.poolScope(), true); err == nil {
		for _, c := range list {
			if isPoolLeftover(c) {
				ids[c.ID] = true
			}
		}
	}
	e.removeAll(ctx, slices.Collect(maps.Keys(ids)))
}

// isPoolLeftover reports whether c is a pooled container never handed out.
func isPoolLeftover(c docker.Container) bool {
	return c.Labels[sandbox.LabelPool] != "" && strings.HasPrefix(c.Name, poolPrefix)
}

// removePooled removes a container taken from the pool but not handed out.
func (e *Engine) removePooled(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.removeAll(ctx, []string{id})
}

// removeAll removes containers in parallel (a forced remove takes ~100 ms).
func (e *Engine) removeAll(ctx context.Context, ids []string) {
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			e.closeKernels(id) // its warm kernel, if any
			if err := e.docker.Remove(ctx, id); err != nil {
				e.log.Warn("remove pooled container", "id", short(id), "err", err)
			}
		})
	}
	wg.Wait()
}
