// Package stats samples the CPU and memory of sandboxes, only for what
// someone looks at: one Docker stats stream for the sandbox the GUI follows
// (the selected one, whose charts move every second), a one-shot read every
// pollEvery for the rows in view, nothing while the window is closed;
// list_sandboxes samples what it lists once, on demand (Freshen). Nothing
// polls every sandbox in the background. It never sees the engine: it reads
// through Docker, keeps the figures (Of), asks only whether a sandbox runs,
// and says when what the GUI shows changed.
package stats

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// publishDelay coalesces the snapshots stats changes cause: a stream sends
// a sample a second, a poll reads many sandboxes at once, and the GUI
// redraws at most once a delay.
const publishDelay = time.Second

// pollEvery is how often the stats of the sandboxes in view are read
// again, one-shot: the list shows CPU averaged over this interval.
const pollEvery = 10 * time.Second

// pollSlack lets a poll take along the sandboxes due within it, so the
// rows in view are read (and redrawn) together rather than one by one.
const pollSlack = 2 * time.Second

// parallel bounds the one-shot reads in flight at once. Docker 20.10
// answers a one-shot read at its stats collector's next tick (up to a
// second later), the same tick for every read in flight: reading the rows
// together costs one wait, not one each.
const parallel = 32

// pollWait bounds a poll's reads; nobody waits for them.
const pollWait = 5 * time.Second

// fresh is how old a sandbox's stats may be before list_sandboxes reads
// them again.
const fresh = time.Second

// freshWait bounds how long list_sandboxes waits for fresh stats.
const freshWait = time.Second

// Docker is what sampling needs from Docker.
type Docker interface {
	Stats(ctx context.Context, id string) (runtime.StatsSample, error)
	StreamStats(ctx context.Context, id string, fn func(runtime.StatsSample)) error
}

// Sampler keeps what is sampled, for whom, and the figures. Create it with
// New and run its loop with Run.
type Sampler struct {
	docker  Docker
	running func(id string) bool
	changed func()
	log     *slog.Logger
	kick    chan struct{} // buffer of one: a coalesced reconcile request

	// mu guards the fields below; running is called with it held, so
	// running must not call the Sampler.
	mu       sync.Mutex
	followed string   // streamed
	shown    []string // polled
	open     map[string]*stream
	sampled  map[string]time.Time // when each sandbox's stats were last read (or tried)
	pending  bool                 // a coalesced publish is due

	// figMu guards figs; it is taken alone, so Of may be called under any
	// lock of the caller's.
	figMu sync.Mutex
	figs  map[string]figures
}

// figures are one sandbox's stats, and the sample they came from (the next
// sample's CPU is the average since it).
type figures struct {
	stats sandbox.Stats
	last  runtime.StatsSample
}

type stream struct{ cancel context.CancelFunc }

// New returns a Sampler that reads through d the sandboxes running says run
// (only those are read, and only their samples kept), and calls changed,
// at most once a publishDelay, when what the GUI shows of their stats
// changed (see visiblyDifferent).
func New(d Docker, running func(id string) bool, changed func(), log *slog.Logger) *Sampler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sampler{docker: d, running: running, changed: changed, log: log, kick: make(chan struct{}, 1),
		open: map[string]*stream{}, sampled: map[string]time.Time{}, figs: map[string]figures{}}
}

// Of returns sandbox id's stats as last sampled (none before a sample, or
// since Forget).
func (s *Sampler) Of(id string) sandbox.Stats {
	s.figMu.Lock()
	defer s.figMu.Unlock()
	return s.figs[id].stats
}

// Forget drops sandbox id's stats: it stopped, started again, or is gone.
func (s *Sampler) Forget(id string) {
	s.figMu.Lock()
	defer s.figMu.Unlock()
	delete(s.figs, id)
}

// Show says which sandboxes' CPU and memory someone shows now (the GUI: the
// rows in view; none while its window is closed). They are read at once
// when their figures are older than pollEvery, then every pollEvery, and
// published as they change; every other sandbox's are left as last read.
// It never blocks.
func (s *Sampler) Show(ids []string) {
	s.mu.Lock()
	s.shown = append(s.shown[:0], ids...)
	s.mu.Unlock()
	s.wake()
}

// Follow says which one sandbox someone watches closely (the GUI: the
// selected one, with its charts; "" for none, as while the window is
// closed): its stats are streamed from Docker, a sample a second, and
// published as they change. It never blocks.
func (s *Sampler) Follow(id string) {
	s.mu.Lock()
	s.followed = id
	s.mu.Unlock()
	s.wake()
}

// Streams returns how many stats streams are open.
func (s *Sampler) Streams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

func (s *Sampler) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run keeps a stream open for the followed sandbox while it runs and polls
// the shown ones when they are due. It does not return until ctx is done
// and every stream has closed.
func (s *Sampler) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		s.reconcile(ctx, &wg)
		var tick <-chan time.Time
		if next := s.poll(ctx, time.Now()); next > 0 {
			timer.Reset(next)
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-tick:
		}
		timer.Stop()
	}
}

// poll reads, one-shot, the shown sandboxes whose stats are due (older than
// pollEvery, or nearly), and returns how long until the next one is due: 0
// when nothing is shown. A sandbox not running is looked at again pollEvery
// later (it may have started; so may the followed one).
func (s *Sampler) poll(ctx context.Context, now time.Time) time.Duration {
	s.mu.Lock()
	if len(s.shown) == 0 && s.followed == "" {
		s.mu.Unlock()
		return 0
	}
	next := pollEvery
	var due []string
	for _, id := range s.shown {
		if id == s.followed || !s.running(id) {
			continue // streamed, or nothing to read
		}
		left := pollEvery - now.Sub(s.sampled[id])
		if left <= pollSlack {
			due = append(due, id)
			s.sampled[id] = now // tried: a failed read is not retried at once
			continue
		}
		next = min(next, left)
	}
	s.mu.Unlock()
	s.read(ctx, due, pollWait)
	return next
}

// read reads the stats of ids one-shot, together, within wait: a daemon
// that does not answer leaves the last figures.
func (s *Sampler) read(ctx context.Context, ids []string, wait time.Duration) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if smp, err := s.docker.Stats(ctx, id); err == nil {
				s.take(id, smp)
			}
		})
	}
	wg.Wait()
}

// reconcile opens the followed sandbox's stream when it runs and closes
// every other.
func (s *Sampler) reconcile(ctx context.Context, wg *sync.WaitGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, st := range s.open {
		if id != s.followed {
			st.cancel()
			delete(s.open, id)
		}
	}
	id := s.followed
	if id == "" || s.open[id] != nil || !s.running(id) {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	st := &stream{cancel: cancel}
	s.open[id] = st
	wg.Go(func() {
		defer cancel()
		err := s.docker.StreamStats(sctx, id, func(smp runtime.StatsSample) { s.take(id, smp) })
		if err != nil && sctx.Err() == nil {
			s.log.Debug("stats stream ended", "id", sandbox.ShortID(id), "err", err)
		}
		s.mu.Lock()
		if s.open[id] == st { // it ended by itself (the sandbox stopped)
			delete(s.open, id)
		}
		s.mu.Unlock()
	})
}

// take keeps a sample of a running sandbox in its stats (see statsAfter) and
// publishes, soon and coalesced, when what the GUI shows of them changed.
func (s *Sampler) take(id string, smp runtime.StatsSample) {
	s.mu.Lock()
	s.sampled[id] = time.Now()
	s.mu.Unlock()
	if !s.running(id) {
		return
	}
	s.figMu.Lock()
	f := s.figs[id]
	next := statsAfter(f.last, smp)
	changed := visiblyDifferent(f.stats, next)
	s.figs[id] = figures{stats: next, last: smp}
	s.figMu.Unlock()
	if changed {
		s.publishSoon()
	}
}

// publishSoon publishes once publishDelay has passed, however many changes
// ask for it meanwhile.
func (s *Sampler) publishSoon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending {
		return
	}
	s.pending = true
	time.AfterFunc(publishDelay, func() {
		s.mu.Lock()
		s.pending = false
		s.mu.Unlock()
		s.changed()
	})
}

// Freshen reads the stats of those of ids (the running sandboxes) whose
// stats are older than fresh, together, once: what list_sandboxes reports.
// CPU is the average since the previous read (0 the first time).
func (s *Sampler) Freshen(ctx context.Context, ids []string) {
	now := time.Now()
	s.mu.Lock()
	stale := ids[:0]
	for _, id := range ids {
		if now.Sub(s.sampled[id]) >= fresh {
			stale = append(stale, id)
		}
	}
	s.mu.Unlock()
	// One-shot stats answer within a second (at the daemon's next stats
	// tick, read together); a daemon that does not answer within freshWait
	// leaves the last figures in the list rather than holding
	// list_sandboxes (a frozen daemon must not stall it).
	s.read(ctx, stale, freshWait)
}

// statsAfter returns the stats a sample gives after the sample prev: CPU is the
// average between the two (0 when prev is none: one sample gives no rate
// yet).
func statsAfter(prev, smp runtime.StatsSample) sandbox.Stats {
	next := sandbox.Stats{
		CPUPercent:  sandbox.CPUPercent(prev.CPUTotal, smp.CPUTotal, prev.SystemCPU, smp.SystemCPU, smp.OnlineCPUs),
		MemoryBytes: sandbox.MemoryUsage(smp.MemoryUsage, smp.MemoryStats),
		MemoryLimit: smp.MemoryLimit,
		Pids:        smp.Pids,
	}
	if prev.SystemCPU == 0 {
		next.CPUPercent = 0 // one sample gives no rate yet
	}
	return next
}

// visiblyDifferent reports whether the GUI would show b differently from
// a: CPU to a tenth of a percent, memory to a tenth of a megabyte, pids.
func visiblyDifferent(a, b sandbox.Stats) bool {
	return math.Abs(a.CPUPercent-b.CPUPercent) >= 0.05 || a.Pids != b.Pids || a.MemoryLimit != b.MemoryLimit ||
		max(a.MemoryBytes, b.MemoryBytes)-min(a.MemoryBytes, b.MemoryBytes) >= 100_000
}
