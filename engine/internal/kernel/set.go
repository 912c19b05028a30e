package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker is what kernels need from the runtime, through the engine's exec
// gate (engine/internal/execgate): a kernel's process runs through the
// sandbox's agent.
type Docker interface {
	Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error)
	KillGroups(ctx context.Context, id, user, marker string, groups []int) (int, error)
}

// Limits are what a run's frames may carry.
type Limits struct {
	OutputBytes    int // per stream, to the model
	LogOutputBytes int // per stream, kept for the log
	MaxImageBytes  int // per image a run writes to its outputs folder
}

// Set is an engine's kernels, one slot per sandbox and language. Create it
// with NewSet; CloseAll ends it.
type Set struct {
	docker Docker
	limits Limits
	log    *slog.Logger
	base   context.Context // the engine's lifetime: kernels' execs derive from it
	wg     sync.WaitGroup  // the kernels' exec goroutines

	mu     sync.Mutex
	slots  map[key]*slot // guarded by mu
	closed bool          // guarded by mu: the engine is closing, no kernel starts
}

// NewSet returns an empty set. Kernels' execs live until they are killed,
// their sandbox goes, or base is done.
func NewSet(base context.Context, d Docker, limits Limits, log *slog.Logger) *Set {
	return &Set{docker: d, limits: limits, log: log, base: base, slots: map[key]*slot{}}
}

// errClosing refuses a kernel to a call that races the engine's Close.
var errClosing = fmt.Errorf("the engine is shutting down; call again once Sandtray runs again: %w", sandbox.ErrUnavailable)

type key struct{ sandboxID, lang string }

// slot is where a sandbox's kernel for one language lives. Holding sem is
// the right to run code there: calls on one kernel take turns.
type slot struct {
	sem chan struct{}

	// Guarded by Set.mu, changed only while holding sem.
	k           *kernel
	lost        bool // the last kernel died: the next one reports lost state
	unavailable bool // the image cannot run a kernel: use the exec path
}

func (ks *Set) slot(sandboxID, lang string) *slot {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	k := key{sandboxID, lang}
	s := ks.slots[k]
	if s == nil {
		s = &slot{sem: make(chan struct{}, 1)}
		ks.slots[k] = s
	}
	return s
}

// lock waits for the slot's turn, at most until ctx is done or within
// passes: a kernel busy for longer (a job) is an error the caller can act on.
func (s *slot) lock(ctx context.Context, within time.Duration, what string) error {
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

func (s *slot) unlock() { <-s.sem }

// get returns the slot's kernel, starting one when there is none, it died,
// or reset asks for a fresh one. restarted reports a start that lost the
// state of a kernel that died. The caller holds s.sem.
func (ks *Set) get(ctx context.Context, t sandbox.Handle, s *slot, lang string, reset bool) (k *kernel, restarted bool, err error) {
	ks.mu.Lock()
	k, unavailable, closed := s.k, s.unavailable, ks.closed
	ks.mu.Unlock()
	if closed {
		return nil, false, errClosing
	}
	if unavailable {
		return nil, false, ErrUnavailable
	}
	if k != nil && reset {
		k.kill(ctx)
		ks.setKernel(s, nil, false)
		k = nil
	}
	if k != nil && !k.isDead() {
		return k, false, nil
	}
	if k != nil {
		ks.setKernel(s, nil, true)
	}
	if err := t.EnsureRunning(ctx); err != nil {
		return nil, false, err
	}
	k, err = ks.start(ctx, t, lang)
	if errors.Is(err, ErrUnavailable) {
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
		k.kill(ctx)
		return nil, false, errClosing
	}
	restarted, s.k, s.lost = s.lost, k, false
	ks.mu.Unlock()
	return k, restarted, nil
}

func (ks *Set) setKernel(s *slot, k *kernel, lost bool) {
	ks.mu.Lock()
	s.k, s.lost = k, lost
	ks.mu.Unlock()
}

// Close kills the kernels of sandbox id and forgets them. Call it when a
// sandbox is stopped, killed or deleted (its kernels die with its processes
// anyway; this frees them at once).
func (ks *Set) Close(id string) { ks.close(id) }

// CloseAll kills every kernel, refuses new ones, and waits for the kernels'
// goroutines: the engine's Close.
func (ks *Set) CloseAll() {
	doomed := ks.close("")
	waitKernels(&ks.wg, doomed, 2*Grace)
}

func (ks *Set) close(id string) []*kernel {
	ks.mu.Lock()
	if id == "" {
		ks.closed = true
	}
	var doomed []*kernel
	for k, s := range ks.slots {
		if id == "" || k.sandboxID == id {
			if s.k != nil {
				doomed = append(doomed, s.k)
			}
			delete(ks.slots, k)
		}
	}
	ks.mu.Unlock()
	for _, k := range doomed {
		k.markDead()
		k.in.close() // the supervisor kills the interpreter at EOF
		// An exec whose stream outlives its container (gVisor) is aborted.
		time.AfterFunc(2*Grace, k.cancel)
	}
	return doomed
}

// AbortSoon aborts, after a grace, the execs of sandbox id's kernels, whose
// container died: their streams normally end with it, and an exec that has
// ended ignores the abort.
func (ks *Set) AbortSoon(id string) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for k, s := range ks.slots {
		if k.sandboxID == id && s.k != nil {
			time.AfterFunc(Grace, s.k.cancel)
		}
	}
}

// Running reports whether sandbox id has a live kernel for lang.
func (ks *Set) Running(id, lang string) bool {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	s := ks.slots[key{id, lang}]
	return s != nil && s.k != nil && !s.k.isDead()
}

// Started lists the sandbox ids and languages that have a kernel object.
func (ks *Set) Started() []string {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	var out []string
	for k, s := range ks.slots {
		if s.k != nil {
			out = append(out, k.sandboxID+"/"+k.lang)
		}
	}
	return out
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

// Warm starts the kernel for lang in t ahead of its first call: the warm
// pool calls it on a pooled container, so the first execute_code of a
// sandbox taken from the pool finds its kernel running. A kernel already
// there is kept.
func (ks *Set) Warm(ctx context.Context, t sandbox.Handle, lang string) error {
	s := ks.slot(t.ID(), lang)
	if err := s.lock(ctx, startTimeout, lang+" kernel"); err != nil {
		return err
	}
	defer s.unlock()
	ks.mu.Lock()
	running := s.k != nil && !s.k.isDead()
	ks.mu.Unlock()
	if running {
		return nil
	}
	k, err := ks.start(ctx, t, lang)
	if err != nil {
		return err
	}
	ks.mu.Lock()
	if ks.closed { // Close came while it started, and did not see it
		ks.mu.Unlock()
		k.kill(ctx)
		return errClosing
	}
	s.k, s.lost = k, false
	ks.mu.Unlock()
	return nil
}

// WarmSoon starts t's kernel for lang in the background (see Warm), bounded
// by the kernel's start timeout and the set's lifetime; CloseAll waits for it.
func (ks *Set) WarmSoon(t sandbox.Handle, lang string) {
	ks.mu.Lock()
	if ks.closed {
		ks.mu.Unlock()
		return
	}
	ks.wg.Add(1)
	ks.mu.Unlock()
	go func() {
		defer ks.wg.Done()
		ctx, cancel := context.WithTimeout(ks.base, startTimeout)
		defer cancel()
		if err := ks.Warm(ctx, t, lang); err != nil && !errors.Is(err, ErrUnavailable) && !errors.Is(err, errClosing) {
			ks.log.Debug("start a new sandbox's kernel ahead of its first call", "id", sandbox.ShortID(t.ID()), "err", err)
		}
	}()
}

// Pids lists, inside sandbox id, the supervisor and the interpreter of
// each of its live kernels: the disk watch spares them, as their state is
// the user's.
func (ks *Set) Pids(id string) []int {
	ks.mu.Lock()
	var live []*kernel
	for k, s := range ks.slots {
		if k.sandboxID == id && s.k != nil {
			live = append(live, s.k)
		}
	}
	ks.mu.Unlock()
	var pids []int
	for _, k := range live {
		k.mu.Lock()
		if !k.dead && k.pids.PID > 1 {
			pids = append(pids, k.pids.PID, k.pids.Child)
		}
		k.mu.Unlock()
	}
	return pids
}
