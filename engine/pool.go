package engine

// The warm pool keeps, per configured image, a few sandboxes created and
// started ahead of time with the default spec, so that create_sandbox (and
// the first execute_code of a session) skips Docker's create and start.
//
// Naming and labels. Docker labels are immutable, so a pooled container is
// created with the labels it keeps for life: managed, image, created (the
// fill time), spec (the default spec, without a name or language), the
// engine's own labels, and io.sandtray.pool=<engine instance>. It has no name
// label. It is named poolPrefix+<generated name>, and its hostname is that
// generated name. Handing it out renames it to containerPrefix+<name>: the
// generated name, or the name the request asked for (the hostname stays the
// generated one). That rename is the commit point: a container whose name
// still starts with poolPrefix is in a pool and never a sandbox, whatever its
// labels say, so a restart removes it as a crash leftover instead of adopting
// it. A handed-out container is adopted like any other; its name comes from
// the container name, and its creation time and language, which its labels
// cannot know, from the state file (boxState.Created, boxState.Language).
//
// Matching. A request takes from the pool when its spec equals the pool's
// for that image in everything the container was created with: network,
// limits, empty env, workdir, runtime and capabilities. Name, language and
// persistence do not matter: the name is applied by the rename and the other
// two live in the state file.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// poolPrefix starts the container name of a pooled container. A sandbox is
// named containerPrefix plus a name that begins with a letter or a digit, so
// no sandbox can ever carry this prefix.
const poolPrefix = "sandtray_pool-"

// pooled is one ready container of the pool.
type pooled struct {
	id    string
	name  string // generated at fill time; also its hostname
	image string
}

// pool holds the ready containers. It has its own lock, never held across a
// Docker call: taking is a slice pop, so Create never waits for a fill.
type pool struct {
	instance string                  // LabelPool value of this engine's containers
	size     int                     // per image
	images   []string                // in fill order
	specs    map[string]sandbox.Spec // by image: the spec pooled containers have
	kick     chan struct{}           // buffer of one: a coalesced refill request

	mu     sync.Mutex
	ready  map[string][]pooled // by image, oldest first
	closed bool
}

// newPool returns the pool the config asks for, or nil when it is disabled.
func (e *Engine) newPool() *pool {
	if e.cfg.Pool.Size <= 0 {
		return nil
	}
	images := e.cfg.Pool.Images
	if len(images) == 0 {
		images = []string{e.cfg.DefaultImage}
	}
	p := &pool{instance: randomHex(6), size: e.cfg.Pool.Size, specs: map[string]sandbox.Spec{},
		kick: make(chan struct{}, 1), ready: map[string][]pooled{}}
	for _, img := range images {
		spec, err := e.specFor(sandbox.CreateRequest{Image: img})
		if err != nil || slices.Contains(p.images, img) {
			continue
		}
		spec.Name = ""
		p.images = append(p.images, img)
		p.specs[img] = spec
	}
	return p
}

// matches reports whether a container created with base can serve want.
func matches(base, want sandbox.Spec) bool {
	want.Name, want.Language, want.Persistent = base.Name, base.Language, base.Persistent
	if len(want.Env) == 0 {
		want.Env = base.Env
	}
	return reflect.DeepEqual(base, want)
}

// take removes and returns a ready container that can serve spec. A
// container leaves the pool here, under the lock, before anyone uses it, so
// no two callers ever get the same one.
func (p *pool) take(spec sandbox.Spec) (pooled, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	base, ok := p.specs[spec.Image]
	list := p.ready[spec.Image]
	if p.closed || !ok || len(list) == 0 || !matches(base, spec) {
		return pooled{}, false
	}
	c := list[0]
	p.ready[spec.Image] = slices.Delete(list, 0, 1)
	return c, true
}

// add puts a container into the pool: a fresh one, or one whose hand-out
// failed. It reports false when the pool is closed or full, and the caller
// must then remove the container.
func (p *pool) add(c pooled) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.ready[c.image]) >= p.size {
		return false
	}
	p.ready[c.image] = append(p.ready[c.image], c)
	return true
}

// refill asks the pool loop to top the pool up; it never blocks.
func (p *pool) refill() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// PoolReady reports how many warm containers are ready, and how many the
// pool holds when full (0 when the pool is disabled).
func (e *Engine) PoolReady() (ready, size int) {
	if e.pool == nil {
		return 0, 0
	}
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	for _, img := range e.pool.images {
		ready += len(e.pool.ready[img])
	}
	return ready, e.pool.size * len(e.pool.images)
}

// renameTimeout bounds handing out a pooled container.
const renameTimeout = 10 * time.Second

// createFromPool makes a sandbox of spec from a pooled container when one
// matches. ok is false when the pool had none (or a Docker failure makes
// the cold path the better bet); err is set only for a name conflict, which
// the cold path would hit as well.
func (e *Engine) createFromPool(ctx context.Context, owner sandbox.Owner, spec sandbox.Spec, named bool) (info sandbox.Info, ok bool, err error) {
	if e.pool == nil {
		return sandbox.Info{}, false, nil
	}
	for {
		c, found := e.pool.take(spec)
		if !found {
			return sandbox.Info{}, false, nil
		}
		e.pool.refill()
		if !named {
			spec.Name = c.name
		}
		// The rename runs to its end even when the caller gives up, so its
		// outcome is known: either a sandbox or still a pooled container.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renameTimeout)
		err := e.docker.Rename(rctx, c.id, containerPrefix+spec.Name)
		cancel()
		switch {
		case err == nil:
			now := time.Now().UTC()
			st := boxState{Persistent: spec.Persistent, Owner: owner, LastUsed: now, Created: now, Language: spec.Language}
			return e.register(owner, c.id, spec, now, st), true, nil
		case errors.Is(err, sandbox.ErrNotFound):
			e.closeKernels(c.id) // its warm kernel went with it
			continue             // removed behind the engine's back; try the next
		case errors.Is(err, sandbox.ErrConflict) && named:
			e.keepPooled(c)
			return sandbox.Info{}, true, fmt.Errorf("a sandbox named %q already exists; pick another name or use that one: %w", spec.Name, sandbox.ErrConflict)
		default:
			e.log.Warn("hand out a pooled sandbox; creating one instead", "id", short(c.id), "err", err)
			e.removePooled(c.id)
			return sandbox.Info{}, false, nil
		}
	}
}

// keepPooled returns a container to the pool, or removes it when the pool
// no longer wants it.
func (e *Engine) keepPooled(c pooled) {
	if !e.pool.add(c) {
		e.removePooled(c.id)
	}
}

// adoptPooled restores what a handed-out pooled container's labels cannot
// know (see the top of this file) from its saved state.
func (b *box) adoptPooled() {
	if !b.state.Created.IsZero() {
		b.created = b.state.Created
	}
	if b.state.Language != "" {
		b.spec.Language = b.state.Language
	}
}
