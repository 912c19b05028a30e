package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/internal/capture"
	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/files"
	"github.com/sandtray/sandtray/engine/internal/images"
	"github.com/sandtray/sandtray/engine/internal/jobs"
	"github.com/sandtray/sandtray/engine/internal/kernel"
	"github.com/sandtray/sandtray/engine/internal/network"
	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/internal/portfwd"
	"github.com/sandtray/sandtray/engine/internal/probe"
	"github.com/sandtray/sandtray/engine/internal/registry"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/internal/snapshot"
	"github.com/sandtray/sandtray/engine/internal/statedir"
	"github.com/sandtray/sandtray/engine/internal/stats"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// activityKept is how many activity entries each sandbox keeps in memory.
const activityKept = 500

// Engine manages sandboxes. It is safe for concurrent use. Create it with New
// and release it with Close.
type Engine struct {
	// conf is the configuration in force: replaced whole by Reconfigure
	// (reconfigure.go), never changed in place; read it with cfg.
	conf   atomic.Pointer[settings]
	docker runtime.Full
	// caps is what the runtime can do of its optional parts (runtime.Capabilities).
	caps  runtime.Capabilities
	log   *slog.Logger
	store *statedir.Store // the state files, activity logs and identity (engine/internal/statedir)
	lock  *statedir.Lock  // the state dir is this engine's while it runs
	start time.Time

	kernels *kernel.Set // the sandboxes' persistent interpreters

	networkPart *networkPart   // the egress gate and the sandboxes' channels to it, the secrets, the port forwards (engine/internal/network)
	ports       *portfwd.Ports // the network part's table of forwards: the lists read it, a sandbox that stops ends its own

	cgroupRoot string // Options.CgroupRoot, for the disk watch (diskwatch.go)
	// attachFirst: a sandbox created on demand gets its agent's session on
	// its attachment, with no exec (create.go); off on a daemon that says it
	// is not Docker's own engine (Podman), where the session is an exec.
	attachFirst bool

	// reg is the sandboxes, the sessions and the calls' gate
	// (engine/internal/registry); its lock also guards watchers, paused,
	// notices and noticeSeq, changed only under reg.Locked.
	reg          *registry.Registry
	watchers     map[*Watcher]struct{}
	paused       bool
	dockerStatus *probe.Watch // its own lock, a leaf
	notices      []sandbox.Notice
	noticeSeq    uint64

	jobs    *jobs.Table // background jobs; their own lock
	outputs *run.Budget // the job output kept in memory and spilled

	imagesPart *imagesPart // what Docker has of an image, the default image's build under way (image.go); its own lock

	// cancelLoops stops the background loops alone (a child of base), as a
	// crash would stop them, for tests.
	cancelLoops context.CancelFunc
	saves       *statedir.LastUse // coalesced saves of last-use times
	loops       sync.WaitGroup    // the loops alone, for stopLoops in tests
	// warmPart is the warm pool, replaced whole by Reconfigure (pool.go);
	// reconf serialises Reconfigure.
	warmPart *warmPart
	reconf   sync.Mutex
	capture  *capture.Capture // installs, commits, diffs, exports
	runner   *run.Runner      // one process in a sandbox: caps, sweep, timeout, output

	// The tools' parts (files.go): the file and copy tools, the capture
	// tools, and the background jobs (their table is jobs, above), each
	// with its own state.
	filesPart   *filesPart
	capturePart *capturePart
	jobsPart    *jobsPart

	execs *execgate.Runtime // wraps docker: the env of sandboxes taken from the pool, and installs' hold (engine/internal/execgate)
	stats *stats.Sampler    // what is sampled, for whom (stats.go)
	snap  *snapshot.Store   // snapshots and the images of forks, and those under way against their limits (engine/internal/snapshot); its own lock

	snapPart *snapPart // snapshots and forks over snap (snapshot.go)

	// What the parts give the Engine's callers: their API's methods are the
	// Engine's, promoted (each is the part above; setParts). The rest of a
	// part's methods are the centre's to call, through its field.
	networkAPI
	imagesAPI
	poolAPI
	filesAPI
	captureAPI
	jobsAPI
	snapshotAPI
}

// The parts' APIs under names of the engine's own, so their fields in
// Engine are unexported.
type (
	networkAPI  = network.API
	imagesAPI   = images.API
	poolAPI     = pool.API
	filesAPI    = files.API
	captureAPI  = capture.API
	jobsAPI     = jobs.API
	snapshotAPI = snapshot.API
)

// setParts makes the parts' APIs the Engine's (see Engine's last fields).
func (e *Engine) setParts() {
	e.networkAPI, e.imagesAPI, e.poolAPI = e.networkPart, e.imagesPart, e.warmPart
	e.filesAPI, e.captureAPI, e.jobsAPI, e.snapshotAPI = e.filesPart, e.capturePart, e.jobsPart, e.snapPart
}

// Options are what New needs besides the config.
type Options struct {
	Logger *slog.Logger
	// Tick is how often the reaper and stats loops run; 0 means 2 s.
	Tick time.Duration
	// Labels are added to every container the engine creates.
	Labels map[string]string
	// CgroupRoot is where the disk watch between calls reads the
	// sandboxes' CPU time ("" for /sys/fs/cgroup). A folder without their
	// cgroups makes it read Docker's stats instead, as with a daemon on
	// another machine (tests).
	CgroupRoot string
	// Runtime, when set, is the container runtime the engine uses (and
	// closes at Close) instead of connecting to the one cfg names: a test's
	// fake (engine/runtime/fakeruntime), or a runtime the caller reached.
	Runtime runtime.Runtime
	// Agent, when set, is the agent every sandbox gets instead of the one
	// built into Sandtray (tests: one that misbehaves).
	Agent *runtime.Agent
	// NoLink keeps the engine from linking to its sandboxes (see
	// engine/internal/execgate's link): their sessions are attachments and
	// execs, as on a daemon on another machine (tests of those).
	NoLink bool
}

// New connects to the container runtime (opts.Runtime, or the one cfg leads
// to), adopts its own containers (statedir.Store.ListOwned), removing
// expired ephemeral ones, and starts the background loops: events, stats and
// the reaper. They run until Close.
func New(ctx context.Context, cfg config.Config, opts Options) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.StateDir == "" {
		return nil, fmt.Errorf("engine: no state dir: %w", sandbox.ErrInvalid)
	}
	cli := opts.Runtime
	if cli == nil {
		var err error
		if cli, err = runtime.Connect(ctx, cfg.RuntimeName(), cfg.RuntimeHost()); err != nil {
			return nil, err
		}
	}
	if ep := cli.Endpoint(); opts.Logger != nil {
		opts.Logger.Info("docker endpoint chosen", "host", ep.Host, "source", ep.Source, "why", ep.Why, "passed_over", ep.Skipped)
	}
	runtime.Complete(cli).SetPullLimit(cfg.Pull.MaxMB << 20)
	e, err := newEngine(ctx, cfg, cli, opts)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return e, nil
}

func newEngine(ctx context.Context, cfg config.Config, rt runtime.Runtime, opts Options) (_ *Engine, err error) {
	d := runtime.Complete(rt) // what rt lacks fails, naming it; e.caps says what that is
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := statedir.TakeLock(cfg.StateDir)
	switch {
	case errors.Is(err, statedir.ErrLocked):
		return nil, fmt.Errorf("%w. Two engines on one state dir would take each other's sandboxes for their own and remove them. "+
			"An assistant configured with `sandtray serve --stdio` runs an engine of its own: configure it with sandtray-mcp instead, "+
			"which shares the one engine (the app's too), or give it a state dir of its own (XDG_STATE_HOME in its environment)", err)
	case errors.Is(err, statedir.ErrCannotLock):
		log.Warn("the state dir cannot be locked: nothing keeps a second engine off it, which would remove this one's sandboxes", "err", err)
		err = nil
	case err != nil:
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Release()
		}
	}()
	store, err := statedir.New(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	id, err := store.Identity()
	if err != nil {
		return nil, err
	}
	x := execgate.New(d)
	e := &Engine{
		docker: x, execs: x, caps: runtime.CapabilitiesOf(d), log: log, store: store, lock: lock, start: time.Now(),
		reg: registry.New(), watchers: map[*Watcher]struct{}{},
	}
	agent, err := agentFor(ctx, d, opts.Agent)
	if err != nil {
		return nil, err
	}
	x.SetAgent(agent, log)
	e.snap = snapshot.New(e.reg.Base(), x, func() snapshot.Config { return e.cfg().snapshots() }, log)
	e.conf.Store(&settings{Config: cfg, labels: opts.Labels, engine: id, agent: agent})
	e.imagesPart = images.New(imageHost{e}, images.Options{Docker: x, Builder: x.Full, Caps: e.caps, Labels: opts.Labels, Base: e.reg.Base(), Log: log})
	e.jobs, e.outputs = jobs.New(cfg)
	e.jobsPart = jobs.NewService(e.jobs, e.outputs, toolHost{e}, log)
	if e.networkPart, e.ports, err = network.New(cfg, x, netHost{e}, log); err != nil {
		return nil, err
	}
	e.saves = statedir.NewLastUse(e.saveState)
	e.cgroupRoot = opts.CgroupRoot
	e.attachFirst = true
	info, ierr := d.Daemon(ctx)
	if !e.caps.Attach || ierr == nil && info.Product != "Docker Engine" {
		e.attachFirst = false
	}
	if !opts.NoLink && ierr == nil && linkable(d.Endpoint(), info) {
		if err := x.EnableLinks(filepath.Join(cfg.StateDir, "link")); err != nil {
			log.Warn("no links to the sandboxes: their sessions are execs", "err", err)
		} else if err := x.SweepLinks(ctx); err != nil {
			log.Warn("sweep the links of removed sandboxes", "err", err)
		}
	}
	e.kernels = kernel.NewSet(e.reg.Base(), x, kernel.Limits{OutputBytes: cfg.Limits.OutputBytes,
		LogOutputBytes: cfg.Limits.LogOutputBytes, MaxImageBytes: cfg.Limits.MaxImageBytes}, log)
	e.warmPart = pool.NewWarm(poolHost{e}, x, e.kernels, e.caps, e.publish, log)
	cc := capture.ConfigOf(&e.cfg().Config, id)
	cc.Images = e.snap.Committed()
	e.capture = capture.New(x, cc, log)
	e.snapPart = newSnapPart(e)
	e.capturePart = capture.NewService(e.capture, e.caps, toolHost{e})
	e.filesPart = files.NewService(files.New(x, files.Config{Limits: files.CopyLimits(&e.cfg().Config), Log: log}), toolHost{e})
	e.setParts()
	e.stats = stats.New(x, e.statsRunning, e.publish, log)
	e.runner = run.New(x, run.Limits{OutputBytes: cfg.Limits.OutputBytes, LogOutputBytes: cfg.Limits.LogOutputBytes}, log)
	e.dockerStatus = probe.NewWatch(x, func(title, body string) { e.notify("", title, body) }, e.publish)
	e.dockerStatus.Check(ctx)
	loopCtx, cancelLoops := context.WithCancel(e.reg.Base())
	e.cancelLoops = cancelLoops
	// The events first: what happens to a container once adopt has
	// listed it reaches the event loop, however long the start-up takes.
	events, errs := e.docker.Events(loopCtx, e.cfg().managed())
	if err := e.adopt(ctx); err != nil {
		cancelLoops()
		return nil, err
	}
	e.networkPart.RestoreNetwork(ctx)
	tick := opts.Tick
	if tick <= 0 {
		tick = 2 * time.Second
	}
	loops := []func(){
		func() { e.eventLoop(loopCtx, tick, events, errs) },
		func() { e.stats.Run(loopCtx) },
		func() { e.reaper(loopCtx, tick) },
		func() { e.diskWatch(loopCtx, tick) },
	}
	e.warmPart.StartPool(loopCtx, tick)
	for _, loop := range loops {
		_ = e.reg.Enter() // never refused: no Close before New returns
		e.loops.Add(1)
		go func() {
			defer e.reg.Leave()
			defer e.loops.Done()
			loop()
		}()
	}
	return e, nil
}

// Close stops the background loops, running calls and jobs and the kernels,
// removes the warm pool's containers and releases Docker. Sandboxes stay as
// they are: call RemoveEphemeral first to remove the ephemeral ones (what
// `sandtray serve` does on exit); those left behind are reaped after their
// grace period on the next start.
//
// It is the engine's one lifetime ending: the closing gate refuses new
// work, cancelling base stops everything that derives from it (loops, the
// calls' and jobs' runs, the kernels' execs), one wait group holds Close
// until the calls, jobs and loops have ended, and the kernel set until its
// kernels' execs have.
func (e *Engine) Close(ctx context.Context) error {
	e.reg.Close()        // calls, jobs and loops; cancels the kernels' execs
	e.kernels.CloseAll() // refuses new kernels and waits for their execs to end
	e.jobsPart.Close()   // their output's memory and spill files
	e.saves.Flush()
	// Forwards end with the engine; persistent sandboxes' come back at the next start.
	e.ports.Close()
	e.networkPart.CloseEgress()
	e.warmPart.WarmPool().Drain(ctx) // pooled containers are not sandboxes: none outlives the engine
	e.execs.CloseSessions()          // and the links: the sandboxes' agents dial the next engine's
	err := e.docker.Close()
	e.lock.Release()
	return err
}

// RemoveEphemeral removes every ephemeral sandbox; persistent ones stay. It
// is what ending every session at once means, e.g. when the engine exits.
func (e *Engine) RemoveEphemeral(ctx context.Context) error {
	var errs []error
	for _, b := range e.reg.Ephemeral() {
		e.jobs.StopIn(b.ID)
		if err := e.docker.Remove(ctx, b.ID); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", b.Name, err))
			continue
		}
		e.forget(b.ID)
	}
	return errors.Join(errs...)
}

// StopEphemeral stops every running ephemeral sandbox (the tray's "stop all
// ephemeral"); the reaper removes them once they expire.
func (e *Engine) StopEphemeral(ctx context.Context) error {
	var errs []error
	for _, b := range e.reg.Ephemeral() {
		if _, err := e.Stop(ctx, sandbox.Owner{}, b.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Config returns the configuration the engine runs with.
func (e *Engine) Config() config.Config { return e.cfg().Config }

// SessionStarted records a live MCP session.
func (e *Engine) SessionStarted(owner sandbox.Owner) {
	e.reg.SessionStarted(owner)
	e.publish()
}

// SessionEnded marks a session closed; its ephemeral sandboxes are removed
// after the session grace period, by the reaper. It never blocks on Docker.
func (e *Engine) SessionEnded(id string) {
	e.reg.SessionEnded(id) // asks the reaper, on its own goroutine: never on the caller's (a connection's teardown)
	e.publish()
}

// SetPaused makes Create refuse new sandboxes (true) or accept them again.
func (e *Engine) SetPaused(paused bool) {
	e.reg.Locked(func() { e.paused = paused })
	e.publish()
}

// List returns every sandbox, oldest first, with its resource use read now
// (at most a second old: stats.Sampler.Freshen).
func (e *Engine) List(ctx context.Context) ([]sandbox.Info, error) {
	e.stats.Freshen(ctx, e.reg.Running())
	var list []sandbox.Info
	e.reg.Locked(func() { list = e.reg.ListLocked(e.ports, e.stats) })
	return list, nil
}

// Get returns one sandbox by id, id prefix or name.
func (e *Engine) Get(ctx context.Context, ref string) (sandbox.Info, error) {
	var info sandbox.Info
	err := e.reg.WithRef(ref, func(b *box) error {
		info = b.Info(e.ports.Forwards(b.ID), e.stats.Of(b.ID))
		return nil
	})
	return info, err
}

// short, randomHex and envList are the engine's names for the helpers in
// engine/sandbox, kept for the code that grew up with them.
func short(id string) string                 { return sandbox.ShortID(id) }
func randomHex(n int) string                 { return sandbox.RandomHex(n) }
func envList(env map[string]string) []string { return sandbox.EnvList(env) }
