package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// kernelSet is an engine's kernels, one slot per sandbox and language, and
// the coalesced saving of last-use times that keeps warm calls off the disk.
type kernelSet struct {
	wg sync.WaitGroup // the kernels' exec goroutines

	mu     sync.Mutex
	slots  map[kernelKey]*kernelSlot
	dirty  map[string]struct{} // sandbox ids whose last use is not saved yet
	timer  *time.Timer         // pending save of dirty, or nil
	closed bool                // the engine is closing: no kernel starts
}

func newKernelSet() *kernelSet {
	return &kernelSet{slots: map[kernelKey]*kernelSlot{}, dirty: map[string]struct{}{}}
}

// errClosing refuses a kernel to a call that races the engine's Close.
var errClosing = fmt.Errorf("the engine is shutting down; call again once Sandtray runs again: %w", sandbox.ErrUnavailable)

type kernelKey struct{ sandboxID, lang string }

// kernelSlot is where a sandbox's kernel for one language lives. Holding
// sem is the right to run code there: calls on one kernel take turns.
type kernelSlot struct {
	sem chan struct{}

	// Guarded by kernelSet.mu, changed only while holding sem.
	k           *kernel
	lost        bool // the last kernel died: the next one reports lost state
	unavailable bool // the image cannot run a kernel: use the exec path
}

func (e *Engine) kernels() *kernelSet { return e.kernelSet }

func (ks *kernelSet) slot(sandboxID, lang string) *kernelSlot {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	key := kernelKey{sandboxID, lang}
	s := ks.slots[key]
	if s == nil {
		s = &kernelSlot{sem: make(chan struct{}, 1)}
		ks.slots[key] = s
	}
	return s
}

// lock waits for the slot's turn, at most until ctx is done or within
// passes: a kernel busy for longer (a job) is an error the caller can act on.
func (s *kernelSlot) lock(ctx context.Context, within time.Duration, what string) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("execution cancelled: %w", ctx.Err())
	case <-t.C:
		return fmt.Errorf("the %s is still busy with an earlier call or job after %s; wait for it (job_status), stop it (job_stop), or run this in another sandbox: %w",
			what, within, sandbox.ErrConflict)
	}
}

func (s *kernelSlot) unlock() { <-s.sem }

// get returns the slot's kernel, starting one when there is none, it died,
// or reset asks for a fresh one. restarted reports a start that lost the
// state of a kernel that died. The caller holds s.sem.
func (ks *kernelSet) get(ctx context.Context, e *Engine, b *box, s *kernelSlot, lang string, reset bool) (k *kernel, restarted bool, err error) {
	ks.mu.Lock()
	k, unavailable, closed := s.k, s.unavailable, ks.closed
	ks.mu.Unlock()
	if closed {
		return nil, false, errClosing
	}
	if unavailable {
		return nil, false, errNoKernel
	}
	if k != nil && reset {
		k.kill(e, b)
		ks.setKernel(s, nil, false)
		k = nil
	}
	if k != nil && !k.isDead() {
		return k, false, nil
	}
	if k != nil {
		ks.setKernel(s, nil, true)
	}
	if err := e.ensureRunning(ctx, b); err != nil {
		return nil, false, err
	}
	k, err = e.startKernel(ctx, b, lang, &ks.wg)
	if errors.Is(err, errNoKernel) {
		ks.mu.Lock()
		s.unavailable = true
		ks.mu.Unlock()
	}
	if err != nil {
		return nil, false, err
	}
	ks.mu.Lock()
	if ks.closed { // Close came while it started, and did not see it
		ks.mu.Unlock()
		k.kill(e, b)
		return nil, false, errClosing
	}
	restarted, s.k, s.lost = s.lost, k, false
	ks.mu.Unlock()
	return k, restarted, nil
}

func (ks *kernelSet) setKernel(s *kernelSlot, k *kernel, lost bool) {
	ks.mu.Lock()
	s.k, s.lost = k, lost
	ks.mu.Unlock()
}

// closeKernels kills the kernels of sandbox id, or of every sandbox when id
// is "", and forgets them; with "" it also saves pending last-use times and
// waits for the kernels' goroutines. Call it when a sandbox is stopped,
// killed or deleted (its kernels die with its processes anyway; this frees
// them at once), and from Close.
func (e *Engine) closeKernels(id string) {
	ks := e.kernels()
	ks.mu.Lock()
	if id == "" {
		ks.closed = true
	}
	var doomed []*kernel
	for key, s := range ks.slots {
		if id == "" || key.sandboxID == id {
			if s.k != nil {
				doomed = append(doomed, s.k)
			}
			delete(ks.slots, key)
		}
	}
	ks.mu.Unlock()
	for _, k := range doomed {
		k.markDead()
		k.in.close() // the supervisor kills the interpreter at EOF
		// An exec whose stream outlives its container (gVisor) is aborted.
		time.AfterFunc(2*kernelGrace, k.cancel)
	}
	if id == "" {
		ks.flushSaves(e)
		waitKernels(&ks.wg, doomed, 2*kernelGrace)
	}
}

// abortKernelsSoon aborts, after a grace, the execs of sandbox id's
// kernels, whose container died: their streams normally end with it, and an
// exec that has ended ignores the abort.
func (e *Engine) abortKernelsSoon(id string) {
	ks := e.kernels()
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for key, s := range ks.slots {
		if key.sandboxID == id && s.k != nil {
			time.AfterFunc(kernelGrace, s.k.cancel)
		}
	}
}

// waitKernels waits for the kernels' goroutines. A kernel whose exec has not
// ended within grace (a frozen supervisor, a paused container) has its exec
// aborted, which ends its goroutine: Close never hangs on one.
func waitKernels(wg *sync.WaitGroup, kernels []*kernel, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	for _, k := range kernels {
		k.cancel()
	}
	<-done
}

// lastUseSaveDelay coalesces last-use saves: a sandbox in steady use is
// written once per delay, never once per call.
const lastUseSaveDelay = time.Second

// releaseSoon ends a call started by acquire, like release, but saves the
// last-use time later, coalesced, off the caller's path.
func (e *Engine) releaseSoon(b *box) {
	e.mu.Lock()
	b.busy--
	e.mu.Unlock()
	ks := e.kernels()
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.dirty[b.id] = struct{}{}
	if ks.timer == nil {
		ks.timer = time.AfterFunc(lastUseSaveDelay, func() { ks.flushSaves(e) })
	}
}

// flushSaves writes the pending last-use times now.
func (ks *kernelSet) flushSaves(e *Engine) {
	ks.mu.Lock()
	dirty := ks.dirty
	ks.dirty = map[string]struct{}{}
	if ks.timer != nil {
		ks.timer.Stop()
		ks.timer = nil
	}
	ks.mu.Unlock()
	for id := range dirty {
		e.mu.Lock()
		b, live := e.boxes[id]
		var st boxState
		if live {
			st = b.state
		}
		e.mu.Unlock()
		if !live {
			continue
		}
		if err := e.store.save(id, st); err != nil {
			e.log.Warn("save sandbox state", "id", short(id), "err", err)
		}
	}
}

// warmKernel starts the kernel for lang in the running container id ahead
// of its first call: the warm pool can call it on a pooled container, so the
// first execute_code of a sandbox taken from the pool finds its kernel
// running. A kernel already there is kept.
func (e *Engine) warmKernel(ctx context.Context, id, workdir, lang string) error {
	ks := e.kernels()
	s := ks.slot(id, lang)
	if err := s.lock(ctx, kernelStartTimeout, lang+" kernel"); err != nil {
		return err
	}
	defer s.unlock()
	ks.mu.Lock()
	running := s.k != nil && !s.k.isDead()
	ks.mu.Unlock()
	if running {
		return nil
	}
	b := &box{id: id, name: short(id), spec: sandbox.Spec{Workdir: workdir}}
	k, err := e.startKernel(ctx, b, lang, &ks.wg)
	if err != nil {
		return err
	}
	ks.setKernel(s, k, false)
	return nil
}
