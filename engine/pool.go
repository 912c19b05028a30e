package engine

import (
	"time"

	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// warmPart is the engine's warm pool (engine/internal/pool), embedded in
// Engine: PoolReady and PoolStatus for the app; WarmPool, StartPool,
// ReplacePool, CreateFromPool and WarmSoon for the engine's centre.
type warmPart = pool.Warm

// poolHost is the engine as its warm pool sees it (pool.Host).
type poolHost struct{ e *Engine }

func (h poolHost) Config() pool.Config {
	c := h.e.cfg()
	pc := pool.ConfigFrom(c.Pool, c.DefaultImage, c.containerName, c.scope())
	pc.Spec, pc.Container = c.poolSpec, c.poolContainer
	return pc
}

func (h poolHost) Go(f func(), loop bool) {
	h.e.reg.Add()
	if loop {
		h.e.loops.Add(1)
	}
	go func() {
		defer h.e.reg.Leave()
		if loop {
			defer h.e.loops.Done()
		}
		f()
	}()
}

// Target is a running container the engine has no box for (yet): a pooled
// one, or one just created.
func (h poolHost) Target(id, workdir string) sandbox.Handle {
	return boxTarget{h.e, &box{ID: id, Name: short(id), Status: sandbox.StatusRunning, Spec: sandbox.Spec{Workdir: workdir}}}
}

func (h poolHost) Register(owner sandbox.Owner, id string, spec sandbox.Spec, now time.Time, adjusted *pool.Adjusted) sandbox.Info {
	st := boxState{Persistent: spec.Persistent, Owner: owner, LastUsed: now, Created: now, Language: spec.Language, Adjusted: adjusted}
	return h.e.register(owner, id, spec, now, st)
}

func (h poolHost) SetEnv(id string, env map[string]string) { h.e.execs.SetEnv(id, env) }

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
func adoptPooled(b *box, x *execgate.Runtime) {
	if !b.State.Created.IsZero() {
		b.Created = b.State.Created
	}
	if b.State.Language != "" {
		b.Spec.Language = b.State.Language
	}
	b.State.Adjusted.Restore(&b.Spec)
	if a := b.State.Adjusted; a != nil && len(a.Env) > 0 {
		x.SetEnv(b.ID, a.Env)
	}
}
