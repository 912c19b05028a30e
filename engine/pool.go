package engine

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// PoolReady reports how many warm containers are ready, and how many the
// pool means to hold now (0 when the pool is disabled).
func (e *Engine) PoolReady() (ready, size int) { return e.pool().Ready() }

// PoolStatus reports what the warm pool holds and wants, image by image.
func (e *Engine) PoolStatus() []sandbox.PoolImage { return e.pool().Status() }

// createFromPool makes a sandbox of spec from a pooled container when one
// can serve it; see pool.Take for ok and err. Limits are changed in place
// by the pool; env, which Docker cannot change in a running container, is
// passed to every process the engine starts in it (see engine/internal/execgate), and
// the spare's kernel, started without it, is restarted with it.
func (e *Engine) createFromPool(ctx context.Context, owner sandbox.Owner, spec sandbox.Spec, named bool) (sandbox.Info, bool, error) {
	id, name, ok, err := e.pool().Take(ctx, spec, named)
	if !ok || err != nil {
		return sandbox.Info{}, ok, err
	}
	spec.Name = name
	now := time.Now().UTC()
	st := boxState{Persistent: spec.Persistent, Owner: owner, LastUsed: now, Created: now, Language: spec.Language,
		Adjusted: pool.AdjustedFrom(spec)}
	if len(spec.Env) > 0 {
		e.execs.SetEnv(id, spec.Env)
		e.kernels.Close(id)
		e.warmSoon(id, spec)
	}
	return e.register(owner, id, spec, now, st), true, nil
}

// poolSpec is the spec a spare of image is made with: the defaults, with
// no name.
func (c *settings) poolSpec(image string) (sandbox.Spec, error) {
	spec, err := c.specFor(sandbox.CreateRequest{Image: image})
	spec.Name = ""
	return spec, err
}

// poolContainer is a spare's container: hardened and labelled as a
// sandbox's.
func (c *settings) poolContainer(name string, spec sandbox.Spec, created time.Time) (runtime.CreateOptions, error) {
	labels, err := c.sandboxLabels(spec, created)
	if err != nil {
		return runtime.CreateOptions{}, err
	}
	return c.createOptions("", name, spec, labels), nil
}

// adoptPooled restores what a handed-out pooled container's labels cannot
// know (see engine/internal/pool) from its saved state, passing its env to
// the processes x starts in it.
func (b *box) adoptPooled(x *execgate.Runtime) {
	if !b.state.Created.IsZero() {
		b.created = b.state.Created
	}
	if b.state.Language != "" {
		b.spec.Language = b.state.Language
	}
	b.state.Adjusted.Restore(&b.spec)
	if a := b.state.Adjusted; a != nil && len(a.Env) > 0 {
		x.SetEnv(b.id, a.Env)
	}
}

// pool is the warm pool in force (nil when disabled: its methods then do
// nothing).
func (e *Engine) pool() *pool.Pool { return e.warm.Load() }
