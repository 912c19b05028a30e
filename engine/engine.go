package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// activityKept is how many activity entries each sandbox keeps in memory.
const activityKept = 500

// Engine manages sandboxes. It is safe for concurrent use. Create it with New
// and release it with Close.
type Engine struct {
	cfg    Config
	docker dockerAPI
	log    *slog.Logger
	store  *stateStore
	start  time.Time
	labels map[string]string // added to every container (tests tag theirs)

	kernelSet *kernelSet // the sandboxes' kernels (kernelset.go)

	mu       sync.Mutex
	boxes    map[string]*box // by container id
	sessions map[string]*session
	jobs     map[string]*job
	callSeq  uint64 // numbers the calls in boxes' calls
	watchers map[*Watcher]struct{}
	paused   bool

	defaultMu sync.Mutex // serialises creating sessions' default sandboxes
	jobsWG    sync.WaitGroup

	dockerStatus sandbox.DockerStatus
	notices      []sandbox.Notice
	noticeSeq    uint64

	cancel context.CancelFunc // stops the background loops
	loops  sync.WaitGroup
	pool   *pool // the warm pool; nil when disabled
}

// box is the engine's record of one sandbox; guarded by Engine.mu.
type box struct {
	id, name string
	spec     sandbox.Spec
	created  time.Time
	status   sandbox.Status
	state    boxState
	stats    sandbox.Stats
	prev     docker.StatsSample // last raw sample, for CPU %
	activity []sandbox.Activity
	busy     int   // calls in flight; a busy sandbox is never reaped
	oomKills int64 // the cgroup's OOM-kill count when last read
	// The writable layer's folder on this host when the engine can read it
	// (upperKnown once looked up), and its size when last measured.
	upperDir   string
	upperKnown bool
	diskSeen   int64
	calls      map[uint64]context.CancelCauseFunc // the calls running in it, to stop them (see guarded)
}

// session is one MCP session (one client connection).
type session struct {
	owner      sandbox.Owner
	ended      time.Time // zero while live
	defaultBox string    // container id of the session's default sandbox
}

// Options are what New needs besides the config.
type Options struct {
	Logger *slog.Logger
	// Tick is how often the reaper and stats loops run; 0 means 2 s.
	Tick time.Duration
	// Labels are added to every container the engine creates.
	Labels map[string]string
}

// New connects to Docker, adopts the managed containers it finds (removing
// expired ephemeral ones) and starts the background loops: events, stats and
// the reaper. They run until Close.
func New(ctx context.Context, cfg Config, opts Options) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.StateDir == "" {
		return nil, fmt.Errorf("engine: no state dir: %w", sandbox.ErrInvalid)
	}
	cli, err := docker.New(ctx)
	if err != nil {
		return nil, err
	}
	e, err := newEngine(ctx, cfg, cli, opts)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return e, nil
}

func newEngine(ctx context.Context, cfg Config, d dockerAPI, opts Options) (*Engine, error) {
	store, err := newStateStore(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{
		cfg: cfg, docker: d, log: log, store: store, start: time.Now(), labels: opts.Labels,
		boxes: map[string]*box{}, sessions: map[string]*session{},
		jobs: map[string]*job{}, watchers: map[*Watcher]struct{}{}, kernelSet: newKernelSet(),
	}
	e.checkDocker(ctx)
	if err := e.adopt(ctx); err != nil {
		return nil, err
	}
	tick := opts.Tick
	if tick <= 0 {
		tick = 2 * time.Second
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	loops := []func(){
		func() { e.eventLoop(loopCtx, tick) },
		func() { every(loopCtx, tick, e.sampleStats) },
		func() { every(loopCtx, tick, e.reapOnce) },
	}
	if e.pool = e.newPool(); e.pool != nil {
		loops = append(loops, func() { e.poolLoop(loopCtx, tick) })
	}
	for _, loop := range loops {
		e.loops.Add(1)
		go func() {
			defer e.loops.Done()
			loop()
		}()
	}
	return e, nil
}

// Close stops the background loops and running jobs, removes the warm pool's
// containers and releases Docker. Sandboxes stay as they are: call
// RemoveEphemeral first to remove the ephemeral ones (what `sandtray serve`
// does on exit); those left behind are reaped after their grace period on
// the next start.
func (e *Engine) Close(ctx context.Context) error {
	e.cancel()
	e.loops.Wait()
	e.drainPool(ctx) // pooled containers are not sandboxes: none outlives the engine
	e.mu.Lock()
	for _, j := range e.jobs {
		j.cancel()
	}
	e.mu.Unlock()
	e.waitJobs()
	e.closeKernels("")
	if c, ok := e.docker.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// RemoveEphemeral removes every ephemeral sandbox; persistent ones stay. It
// is what ending every session at once means, e.g. when the engine exits.
func (e *Engine) RemoveEphemeral(ctx context.Context) error {
	var errs []error
	for _, b := range e.ephemeral() {
		e.stopJobsOf(b.id)
		if err := e.docker.Remove(ctx, b.id); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", b.name, err))
			continue
		}
		e.forget(b.id)
	}
	return errors.Join(errs...)
}

// StopEphemeral stops every running ephemeral sandbox (the tray's "stop all
// ephemeral"); the reaper removes them once they expire.
func (e *Engine) StopEphemeral(ctx context.Context) error {
	var errs []error
	for _, b := range e.ephemeral() {
		if _, err := e.Stop(ctx, sandbox.Owner{}, b.id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) ephemeral() []*box {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*box
	for _, b := range e.boxes {
		if !b.state.Persistent {
			out = append(out, b)
		}
	}
	return out
}

// Config returns the configuration the engine runs with.
func (e *Engine) Config() Config { return e.cfg }

// SessionStarted records a live MCP session.
func (e *Engine) SessionStarted(owner sandbox.Owner) {
	e.mu.Lock()
	if s, ok := e.sessions[owner.Session]; ok {
		s.owner, s.ended = owner, time.Time{}
	} else {
		e.sessions[owner.Session] = &session{owner: owner}
	}
	e.mu.Unlock()
	e.publish()
}

// SessionEnded marks a session closed; its ephemeral sandboxes are removed
// after the session grace period.
func (e *Engine) SessionEnded(id string) {
	e.mu.Lock()
	if s, ok := e.sessions[id]; ok {
		s.ended = time.Now()
	}
	e.mu.Unlock()
	e.publish()
	e.reapOnce(context.Background())
}

// SetPaused makes Create refuse new sandboxes (true) or accept them again.
func (e *Engine) SetPaused(paused bool) {
	e.mu.Lock()
	e.paused = paused
	e.mu.Unlock()
	e.publish()
}

// lookup resolves a sandbox reference: a full id, a unique id prefix of at
// least 4 characters, or a name. It never resolves containers Sandtray does
// not manage. Callers hold e.mu.
func (e *Engine) lookup(ref string) (*box, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("no sandbox_id given: %w", sandbox.ErrInvalid)
	}
	if b, ok := e.boxes[ref]; ok {
		return b, nil
	}
	var found *box
	for id, b := range e.boxes {
		if b.name == ref || (len(ref) >= 4 && strings.HasPrefix(id, ref)) {
			if found != nil && found != b {
				return nil, fmt.Errorf("sandbox %q is ambiguous; give more of the id or the name: %w", ref, sandbox.ErrInvalid)
			}
			found = b
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no sandbox %q; list_sandboxes shows the ones that exist: %w", ref, sandbox.ErrNotFound)
	}
	return found, nil
}

// infoLocked builds the public view of a box. Callers hold e.mu.
func (e *Engine) infoLocked(b *box) sandbox.Info {
	return sandbox.Info{
		ID: b.id, Name: b.name, Image: b.spec.Image, Status: b.status,
		Persistent: b.state.Persistent, Owner: b.state.Owner,
		CreatedAt: b.created, LastUsed: b.state.LastUsed, Spec: b.spec, Stats: b.stats,
	}
}

// List returns every sandbox, oldest first.
func (e *Engine) List(ctx context.Context) ([]sandbox.Info, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.listLocked(), nil
}

func (e *Engine) listLocked() []sandbox.Info {
	out := make([]sandbox.Info, 0, len(e.boxes))
	for _, b := range e.boxes {
		out = append(out, e.infoLocked(b))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Get returns one sandbox by id, id prefix or name.
func (e *Engine) Get(ctx context.Context, ref string) (sandbox.Info, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.lookup(ref)
	if err != nil {
		return sandbox.Info{}, err
	}
	return e.infoLocked(b), nil
}

// forget drops a sandbox from memory and the state dir.
func (e *Engine) forget(id string) {
	e.closeKernels(id)
	e.mu.Lock()
	delete(e.boxes, id)
	for _, s := range e.sessions {
		if s.defaultBox == id {
			s.defaultBox = ""
		}
	}
	e.mu.Unlock()
	e.store.remove(id)
	e.publish()
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
