package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// renameTimeout bounds handing out a pooled container.
const renameTimeout = 10 * time.Second

// take removes and returns a ready container that can serve spec. A
// container leaves the pool here, under the lock, before anyone uses it, so
// no two callers ever get the same one.
func (p *Pool) take(spec sandbox.Spec) (pooled, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.images[spec.Image]
	if p.closed || !ok {
		return pooled{}, false
	}
	i := slices.IndexFunc(s.ready, func(c pooled) bool { return Adjustable(c.spec, spec) })
	if i < 0 {
		return pooled{}, false
	}
	c := s.ready[i]
	s.ready = slices.Delete(s.ready, i, i+1)
	p.lastTake = p.now()
	return c, true
}

// Take hands out a pooled container for spec when one can serve it, with
// its memory and CPU limits changed to spec's when they differ, renamed to
// its sandbox name: spec.Name when named, else the name it was pooled with,
// which Take returns. ok is false when the pool had none (or a Docker
// failure makes the cold path the better bet); err is set only for a name
// conflict, which the cold path would hit as well. The caller applies
// spec.Env (see Adjustable).
func (p *Pool) Take(ctx context.Context, spec sandbox.Spec, named bool) (id, name string, ok bool, err error) {
	if p == nil {
		return "", "", false, nil
	}
	for {
		c, found := p.take(spec)
		if !found {
			return "", "", false, nil
		}
		p.refill()
		p.changed()
		name = spec.Name
		if !named {
			name = c.name
		}
		// The update and the rename run to their end even when the caller
		// gives up, so the outcome is known: a sandbox or a pooled container.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renameTimeout)
		err := p.adjust(rctx, c, spec)
		if err == nil {
			err = p.docker.Rename(rctx, c.id, p.cfg.SandboxName(name))
		}
		cancel()
		switch {
		case err == nil:
			return c.id, name, true, nil
		case errors.Is(err, sandbox.ErrNotFound):
			p.kernels.Close(c.id) // its warm kernel went with it
			continue              // removed behind the engine's back; try the next
		case errors.Is(err, sandbox.ErrConflict) && named && !errors.Is(err, errAdjust):
			p.keep(ctx, c)
			return "", "", true, fmt.Errorf("a sandbox named %q already exists; pick another name or use that one: %w", name, sandbox.ErrConflict)
		default:
			p.log.Warn("hand out a pooled sandbox; creating one instead", "id", sandbox.ShortID(c.id), "err", err)
			p.removeOne(ctx, c.id)
			return "", "", false, nil
		}
	}
}

// errAdjust marks a failed change of limits, which no name conflict explains.
var errAdjust = errors.New("change the limits of a pooled container")

// adjust changes c's memory and CPU limits to spec's where they differ.
func (p *Pool) adjust(ctx context.Context, c pooled, spec sandbox.Spec) error {
	var memoryMB, milliCPUs int64
	if spec.MemoryMB != c.spec.MemoryMB {
		memoryMB = spec.MemoryMB
	}
	if spec.CPUs != c.spec.CPUs {
		milliCPUs = runtime.MilliCPUs(spec.CPUs)
	}
	if memoryMB == 0 && milliCPUs == 0 {
		return nil
	}
	if err := p.docker.UpdateLimits(ctx, c.id, memoryMB, milliCPUs); err != nil {
		if errors.Is(err, sandbox.ErrNotFound) {
			return err
		}
		return fmt.Errorf("%w: %w", errAdjust, err)
	}
	return nil
}

// keep returns a container to the pool, or removes it when the pool is
// closed.
func (p *Pool) keep(ctx context.Context, c pooled) {
	p.mu.Lock()
	kept := !p.closed
	if kept {
		s := p.state(c.image)
		s.ready = append(s.ready, c)
	}
	p.mu.Unlock()
	if !kept {
		p.removeOne(ctx, c.id)
	}
}
