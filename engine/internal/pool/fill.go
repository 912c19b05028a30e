package pool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/internal/kernel"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// maxBackoff caps the wait between fill attempts that keep failing (a
// missing image, a daemon that is down), so a broken pool costs little.
const maxBackoff = time.Minute

// pruneEvery is how many ticks pass between the safety-net checks that the
// spares still run: the engine reports their deaths as they happen (Gone),
// so the list is only for events missed while reconnecting.
const pruneEvery = 30

// Run keeps the pool at its budget: after every take, fill, image event and
// tick it starts the fills each image lacks (up to Parallel at once) and
// removes the spares no image wants any more (idle, over the budget). It is
// the only goroutine that starts fills. It does not return until ctx is
// done and every fill and removal it started has ended.
func (p *Pool) Run(ctx context.Context, tick time.Duration) {
	defer p.work.Wait()
	p.work.Go(func() { p.watchImages(ctx, tick) })
	t := time.NewTicker(tick)
	defer t.Stop()
	for ticks := 1; ; ticks++ {
		p.plan(ctx)
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
			p.settle(ctx)
		case <-t.C:
			if ticks%pruneEvery == 0 {
				p.prune(ctx)
				p.imagesChanged(ctx)
			}
		}
	}
}

// takeSettle is how long fills wait after a take: the sandbox just handed
// out is about to run its first call, and more creates of a burst may
// follow; a fill (a create, a start, a python) competing with them for the
// CPU would slow down exactly what the pool is for.
const takeSettle = 150 * time.Millisecond

// settle waits until takeSettle has passed since the last take.
func (p *Pool) settle(ctx context.Context) {
	for {
		p.mu.Lock()
		wait := p.lastTake.Add(takeSettle).Sub(p.now())
		p.mu.Unlock()
		if wait <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// plan starts the fills each image lacks and removes surplus spares.
func (p *Pool) plan(ctx context.Context) {
	p.mu.Lock()
	if p.closed || ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	now := p.now()
	alloc := p.allocate(now)
	filling := 0
	for _, s := range p.images {
		filling += s.filling
	}
	var surplus []string
	var fills []string
	for _, img := range slices.Sorted(maps.Keys(p.images)) {
		s := p.images[img]
		for len(s.ready) > alloc[img] {
			surplus = append(surplus, s.ready[0].id)
			s.ready = slices.Delete(s.ready, 0, 1)
		}
		for len(s.ready)+s.filling < alloc[img] && filling < p.cfg.Parallel && now.After(s.retryAt) {
			s.filling++
			filling++
			fills = append(fills, img)
		}
		if !s.configured && len(s.ready)+s.filling == 0 && len(s.uses) == 0 {
			delete(p.images, img) // idle for Idle: forgotten
		}
	}
	p.mu.Unlock()
	for _, img := range fills {
		p.work.Go(func() { p.fillOne(ctx, img) })
	}
	if len(surplus) > 0 {
		p.work.Go(func() { p.RemoveAll(ctx, surplus) })
		p.changed()
	}
}

// fillTimeout bounds creating and starting one pooled container.
const fillTimeout = time.Minute

// fillOne makes one spare of image and puts it in the pool; a failure backs
// the image off. A fill runs to its end even when ctx is done: a create
// cancelled mid-call can still happen in the daemon, leaving a container
// nobody knows of. Run waits for it, and Drain then removes it.
func (p *Pool) fillOne(ctx context.Context, image string) {
	c, memory, err := p.make(context.WithoutCancel(ctx), image)
	p.mu.Lock()
	s := p.state(image)
	s.filling--
	if err != nil {
		s.backoff = min(max(2*s.backoff, time.Second), maxBackoff)
		s.retryAt = p.now().Add(s.backoff)
		logIt := err.Error() != s.lastErr
		s.lastErr = err.Error()
		p.mu.Unlock()
		if logIt && ctx.Err() == nil {
			p.log.Warn("warm pool: cannot make a spare; new sandboxes of this image start cold", "image", image, "err", err)
		}
		return
	}
	s.backoff, s.retryAt, s.lastErr = 0, time.Time{}, ""
	if memory > 0 {
		s.memory = cmpAvg(s.memory, memory)
	}
	kept := !p.closed
	if kept {
		s.ready = append(s.ready, c)
	}
	p.mu.Unlock()
	if !kept {
		p.removeOne(ctx, c.id)
		return
	}
	p.changed()
	p.refill()
}

// make creates and starts one pooled container of image with its kernel
// running, and measures what it uses. It never pulls: a missing image
// fails here and is retried later, quietly.
func (p *Pool) make(ctx context.Context, image string) (pooled, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, fillTimeout)
	defer cancel()
	spec, err := p.cfg.Spec(image)
	if err != nil {
		return pooled{}, 0, err
	}
	img, err := p.docker.InspectImage(ctx, image)
	if err != nil {
		return pooled{}, 0, err
	}
	name := "sb-" + sandbox.RandomHex(3)
	opts, err := p.cfg.Container(name, spec, p.now().UTC())
	if err != nil {
		return pooled{}, 0, err
	}
	opts.Name = Prefix + name
	opts.Labels = maps.Clone(opts.Labels)
	if opts.Labels == nil {
		opts.Labels = map[string]string{}
	}
	opts.Labels[sandbox.LabelPool] = p.instance
	id, err := p.docker.Create(ctx, opts)
	if err != nil {
		return pooled{}, 0, err
	}
	if err := p.docker.Start(ctx, id); err != nil {
		p.removeOne(ctx, id)
		return pooled{}, 0, fmt.Errorf("start sandbox from image %s: %w", image, err)
	}
	if err := p.kernels.Warm(ctx, spare{id: id, name: name, workdir: spec.Workdir}, Kernel); err != nil && !errors.Is(err, kernel.ErrUnavailable) {
		p.removeOne(ctx, id)
		return pooled{}, 0, err
	}
	var memory uint64
	if st, err := p.docker.Stats(ctx, id); err == nil {
		memory = sandbox.MemoryUsage(st.MemoryUsage, st.MemoryStats)
	}
	return pooled{id: id, name: name, image: image, imageID: img.ID, spec: spec}, memory, nil
}

// cmpAvg averages a new measurement into an old one (0: none yet).
func cmpAvg(old, v uint64) uint64 {
	if old == 0 {
		return v
	}
	return (old + v) / 2
}

// prune drops the pooled containers that are gone or no longer running
// (killed or removed outside Sandtray), so they are never handed out.
func (p *Pool) prune(ctx context.Context) {
	if ready, _ := p.Ready(); ready == 0 {
		return
	}
	list, err := p.docker.List(ctx, p.scope(), true)
	if err != nil {
		return
	}
	running := map[string]bool{}
	for _, c := range list {
		running[c.ID] = c.State == "running"
	}
	var dead []string
	for _, id := range p.IDs() {
		if !running[id] {
			dead = append(dead, id)
		}
	}
	for _, id := range dead {
		p.Gone(ctx, id)
	}
}

// scope selects this engine's pooled containers.
func (p *Pool) scope() map[string]string {
	s := map[string]string{sandbox.LabelPool: p.instance}
	maps.Copy(s, p.cfg.Scope)
	return s
}

// spare is a spare's container as its kernel sees it: running, in no
// registry, held by nothing.
type spare struct{ id, name, workdir string }

func (s spare) ID() string                          { return s.id }
func (s spare) Name() string                        { return s.name }
func (s spare) Workdir() string                     { return s.workdir }
func (s spare) User() string                        { return "" }
func (s spare) EnsureRunning(context.Context) error { return nil }
func (s spare) MarkStopped() bool                   { return true }
func (s spare) Gone(err error) error                { return err }
func (s spare) WaitExecs(context.Context) error     { return nil }
