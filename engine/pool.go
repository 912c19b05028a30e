package engine

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/internal/kernel"
	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// newPool returns the warm pool the config asks for, or nil when it is
// disabled (see engine/internal/pool).
func (e *Engine) newPool() *pool.Pool {
	c := e.cfg.Pool
	images := c.Images
	if len(images) == 0 {
		images = []string{e.cfg.DefaultImage}
	}
	cfg := pool.Config{
		Size: c.Size, Images: slices.Compact(slices.Sorted(slices.Values(images))), MaxTotal: c.MaxTotal,
		MemoryMB: c.MemoryMB, Idle: c.Idle.Duration, Parallel: max(2, runtime.NumCPU()),
		SandboxPrefix: containerPrefix, Scope: e.scope(),
	}
	return pool.New(cfg, e.docker, poolHost{e}, e.log)
}

// PoolReady reports how many warm containers are ready, and how many the
// pool means to hold now (0 when the pool is disabled).
func (e *Engine) PoolReady() (ready, size int) { return e.pool.Ready() }

// PoolStatus reports what the warm pool holds and wants, image by image.
func (e *Engine) PoolStatus() []sandbox.PoolImage { return e.pool.Status() }

// createFromPool makes a sandbox of spec from a pooled container when one
// can serve it; see pool.Take for ok and err. Limits are changed in place
// by the pool; env, which Docker cannot change in a running container, is
// passed to every process the engine starts in it (see execenv.go), and
// the spare's kernel, started without it, is restarted with it.
func (e *Engine) createFromPool(ctx context.Context, owner sandbox.Owner, spec sandbox.Spec, named bool) (sandbox.Info, bool, error) {
	id, name, ok, err := e.pool.Take(ctx, spec, named)
	if !ok || err != nil {
		return sandbox.Info{}, ok, err
	}
	spec.Name = name
	now := time.Now().UTC()
	st := boxState{Persistent: spec.Persistent, Owner: owner, LastUsed: now, Created: now, Language: spec.Language,
		Adjusted: adjustedFrom(spec)}
	if len(spec.Env) > 0 {
		e.execEnv.set(id, spec.Env)
		e.kernels.Close(id)
		e.warmSoon(id, spec)
	}
	return e.register(owner, id, spec, now, st), true, nil
}

// noteUse tells the pool a sandbox of spec's image was made, when a spare
// could have served it: the pool learns the images in use and their bursts.
func (e *Engine) noteUse(spec sandbox.Spec) {
	if e.pool == nil {
		return
	}
	if base, err := (poolHost{e}).Spec(spec.Image); err == nil && pool.Adjustable(base, spec) {
		e.pool.Note(spec.Image)
	}
}

// adjustedFrom is what a pooled sandbox's labels do not say about spec.
func adjustedFrom(spec sandbox.Spec) *adjusted {
	return &adjusted{MemoryMB: spec.MemoryMB, CPUs: spec.CPUs, Env: spec.Env}
}

// adjusted is what the hand-out changed of a pooled container: its limits
// and env, which its spec label (written when it was pooled) cannot know.
type adjusted struct {
	MemoryMB int64             `json:"memory_mb"`
	CPUs     float64           `json:"cpus"`
	Env      map[string]string `json:"env,omitempty"`
}

// removePoolLeftovers removes the pooled containers a crashed engine left.
func (e *Engine) removePoolLeftovers(ctx context.Context, ids []string) {
	pool.RemoveAll(ctx, e.docker, e.kernels.Close, e.log, ids)
}

// poolHost is what the warm pool needs of the engine.
type poolHost struct{ e *Engine }

func (h poolHost) Spec(image string) (sandbox.Spec, error) {
	spec, err := h.e.specFor(sandbox.CreateRequest{Image: image})
	spec.Name = ""
	return spec, err
}

func (h poolHost) Labels(spec sandbox.Spec, created time.Time) (map[string]string, error) {
	return h.e.sandboxLabels(spec, created)
}

func (h poolHost) CreateOptions(containerName, hostname string, spec sandbox.Spec, labels map[string]string) docker.CreateOptions {
	return h.e.createOptions(containerName, hostname, spec, labels)
}

func (h poolHost) StartOrRemove(ctx context.Context, id, image string) error {
	return h.e.startOrRemove(ctx, id, image)
}

func (h poolHost) WarmKernel(ctx context.Context, id, workdir, lang string) error {
	if err := h.e.kernels.Warm(ctx, h.e.containerTarget(id, workdir), lang); !errors.Is(err, kernel.ErrUnavailable) {
		return err
	}
	return nil
}

func (h poolHost) Forget(id string) { h.e.kernels.Close(id) }

func (h poolHost) Changed() { h.e.publish() }

// adoptPooled restores what a handed-out pooled container's labels cannot
// know (see engine/internal/pool) from its saved state.
func (e *Engine) adoptPooled(b *box) {
	if !b.state.Created.IsZero() {
		b.created = b.state.Created
	}
	if b.state.Language != "" {
		b.spec.Language = b.state.Language
	}
	if a := b.state.Adjusted; a != nil {
		b.spec.MemoryMB, b.spec.CPUs, b.spec.Env = a.MemoryMB, a.CPUs, a.Env
		if len(a.Env) > 0 {
			e.execEnv.set(b.id, a.Env)
		}
	}
}
