package pool

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Host is what the warm pool needs of the engine's centre.
type Host interface {
	// Config is the pool's configuration under the settings in force.
	Config() Config
	// Go runs f on a goroutine the engine's Close waits for; loop makes it
	// one of the engine's background loops too (which tests stop alone).
	Go(f func(), loop bool)
	// Target is a running container the engine has no sandbox for (yet),
	// a spare handed out or a container just created, as kernels see it.
	Target(id, workdir string) sandbox.Handle
	// Register makes container id, handed out for spec at now, owner's
	// sandbox, whose state keeps what the hand-out adjusted.
	Register(owner sandbox.Owner, id string, spec sandbox.Spec, now time.Time, adjusted *Adjusted) sandbox.Info
	// SetEnv passes env to every process the engine starts in container id
	// (Docker cannot change a running container's).
	SetEnv(id string, env map[string]string)
}

// WarmKernels is the engine's kernels (kernel.Set) as the warm pool uses
// them: a spare's warmed and ended, a new sandbox's started in the
// background.
type WarmKernels interface {
	Kernels
	WarmSoon(h sandbox.Handle, lang string)
}

// Warm is the engine's warm pool in force (a Pool, nil when disabled: its
// methods then do nothing), made for the configuration in force and
// replaced whole when that changes. The engine embeds it: PoolReady and
// PoolStatus are the app's, the rest the engine's centre's.
type Warm struct {
	host    Host
	docker  Docker
	kernels WarmKernels
	caps    runtime.Capabilities
	changed func()
	log     *slog.Logger

	cur atomic.Pointer[Pool]
	// stop stops the current pool's Run; ctx and tick are what a new one
	// runs with. StartPool, then ReplacePool under the engine's
	// Reconfigure lock, are the only writers.
	stop func()
	ctx  context.Context
	tick time.Duration
}

// NewWarm returns the engine's warm pool, none yet: StartPool makes it. It
// makes spares through d, warms their kernels in kernels, and calls changed
// (which must not block) when what it holds changed, for the GUI.
func NewWarm(h Host, d Docker, kernels WarmKernels, caps runtime.Capabilities, changed func(), log *slog.Logger) *Warm {
	return &Warm{host: h, docker: d, kernels: kernels, caps: caps, changed: changed, log: log, stop: func() {}}
}

// WarmPool is the warm pool in force (nil when disabled, or before the
// engine made its Warm: its methods then do nothing).
func (w *Warm) WarmPool() *Pool {
	if w == nil {
		return nil
	}
	return w.cur.Load()
}

// PoolReady reports how many warm containers are ready, and how many the
// pool means to hold now (0 when the pool is disabled).
func (w *Warm) PoolReady() (ready, size int) { return w.WarmPool().Ready() }

// PoolStatus reports what the warm pool holds and wants, image by image.
func (w *Warm) PoolStatus() []sandbox.PoolImage { return w.WarmPool().Status() }

// StartPool makes the warm pool for the configuration in force (none when
// its size is 0) and runs it under ctx, refilling every tick; the engine's
// Close waits until it has ended.
func (w *Warm) StartPool(ctx context.Context, tick time.Duration) {
	w.ctx, w.tick = ctx, tick
	pc := w.host.Config()
	if !w.caps.Rename || !w.caps.UpdateLimits || !w.caps.Images { // a spare cannot become a sandbox
		pc.Size = 0
	}
	p := New(pc, w.docker, w.kernels, w.changed, w.log)
	w.cur.Store(p)
	if p == nil { // disabled
		w.stop = func() {}
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	w.host.Go(func() {
		defer close(done)
		p.Run(ctx, tick)
	}, true)
	w.stop = func() { cancel(); <-done }
}

// ReplacePool swaps the warm pool for one made with the configuration in
// force: the old one stops filling, and its spares are removed in the
// background. Called under the engine's Reconfigure lock, inside its
// lifetime.
func (w *Warm) ReplacePool(ctx context.Context) {
	w.stop()
	old := w.cur.Load()
	w.StartPool(w.ctx, w.tick)
	if old != nil {
		w.host.Go(func() { old.Drain(context.WithoutCancel(ctx)) }, false)
	}
}

// CreateFromPool makes owner's sandbox of spec from a pooled container when
// one can serve it; see Pool.Take for ok and err. Limits are changed in
// place by the pool; env, which Docker cannot change in a running
// container, is passed to every process the engine starts in it (see
// engine/internal/execgate), and the spare's kernel, started without it, is
// restarted with it.
func (w *Warm) CreateFromPool(ctx context.Context, owner sandbox.Owner, spec sandbox.Spec, named bool) (sandbox.Info, bool, error) {
	id, name, ok, err := w.WarmPool().Take(ctx, spec, named)
	if !ok || err != nil {
		return sandbox.Info{}, ok, err
	}
	spec.Name = name
	now := time.Now().UTC()
	if len(spec.Env) > 0 {
		w.host.SetEnv(id, spec.Env)
		w.kernels.Close(id)
		w.WarmSoon(id, spec)
	}
	return w.host.Register(owner, id, spec, now, AdjustedFrom(spec)), true, nil
}

// WarmSoon starts sandbox id's python kernel in the background, right after
// its container started: the first execute_code then finds it started, or
// starting, instead of starting it after its request arrives (the kernel's
// start is most of what a new sandbox's first result costs beyond Docker's
// create and start). It waits on the kernel's slot, so a call that comes
// first simply starts the kernel itself. Only for sandboxes whose code runs
// on python's kernel by default.
func (w *Warm) WarmSoon(id string, spec sandbox.Spec) {
	if !kernelFirst(spec) {
		return
	}
	w.kernels.WarmSoon(w.host.Target(id, spec.Workdir), Kernel)
}

// kernelFirst reports whether spec's code runs on python's kernel by
// default: its sandbox's kernel starts with it.
func kernelFirst(spec sandbox.Spec) bool {
	return spec.Language == "" || spec.Language == Kernel
}
