package engine

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// statsPublishDelay coalesces the snapshots stats changes cause: a stream
// sends a sample a second, a poll reads many sandboxes at once, and the GUI
// redraws at most once a delay.
const statsPublishDelay = time.Second

// statsPollEvery is how often the stats of the sandboxes in view are read
// again, one-shot: the list shows CPU averaged over this interval.
const statsPollEvery = 10 * time.Second

// statsPollSlack lets a poll take along the sandboxes due within it, so the
// rows in view are read (and redrawn) together rather than one by one.
const statsPollSlack = 2 * time.Second

// statsParallel bounds the one-shot reads in flight at once. Docker 20.10
// answers a one-shot read at its stats collector's next tick (up to a
// second later), the same tick for every read in flight: reading the rows
// together costs one wait, not one each.
const statsParallel = 32

// statsPollWait bounds a poll's reads; nobody waits for them.
const statsPollWait = 5 * time.Second

// statsStreams samples resource use only for what someone looks at: one
// Docker stats stream for the sandbox the GUI follows (FollowStats: the
// selected one, whose charts move every second), a one-shot read every
// statsPollEvery for the rows in view (ShowStats), nothing while the window
// is closed; list_sandboxes samples what it lists once, on demand
// (freshenStats). Nothing polls every sandbox in the background.
type statsStreams struct {
	kick chan struct{} // buffer of one: a coalesced reconcile request

	// mu guards the fields below; it is taken before Engine.mu, never after.
	mu       sync.Mutex
	followed string   // streamed
	shown    []string // polled
	open     map[string]*statsStream
	sampled  map[string]time.Time // when each sandbox's stats were last read (or tried)
	pending  bool                 // a coalesced publish is due
}

type statsStream struct{ cancel context.CancelFunc }

func newStatsStreams() *statsStreams {
	return &statsStreams{kick: make(chan struct{}, 1),
		open: map[string]*statsStream{}, sampled: map[string]time.Time{}}
}

// ShowStats says which sandboxes' CPU and memory someone shows now (the
// GUI: the rows in view; none while its window is closed). They are read
// at once when their figures are older than statsPollEvery, then every
// statsPollEvery, and published as they change; every other sandbox's are
// left as last read. It never blocks.
func (e *Engine) ShowStats(ids []string) {
	s := e.stats
	s.mu.Lock()
	s.shown = append(s.shown[:0], ids...)
	s.mu.Unlock()
	s.wake()
}

// FollowStats says which one sandbox someone watches closely (the GUI: the
// selected one, with its charts; "" for none, as while the window is
// closed): its stats are streamed from Docker, a sample a second, and
// published as they change. It never blocks.
func (e *Engine) FollowStats(id string) {
	s := e.stats
	s.mu.Lock()
	s.followed = id
	s.mu.Unlock()
	s.wake()
}

func (s *statsStreams) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// statsLoop keeps a stream open for the followed sandbox while it runs and
// polls the shown ones when they are due. It does not return until ctx is
// done and every stream has closed.
func (e *Engine) statsLoop(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		e.reconcileStats(ctx, &wg)
		var tick <-chan time.Time
		if next := e.pollStats(ctx, time.Now()); next > 0 {
			timer.Reset(next)
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-e.stats.kick:
		case <-tick:
		}
		timer.Stop()
	}
}

// pollStats reads, one-shot, the shown sandboxes whose stats are due (older
// than statsPollEvery, or nearly), and returns how long until the next one
// is due: 0 when nothing is shown. A sandbox not running is looked at again
// statsPollEvery later (it may have started; so may the followed one).
func (e *Engine) pollStats(ctx context.Context, now time.Time) time.Duration {
	s := e.stats
	s.mu.Lock()
	if len(s.shown) == 0 && s.followed == "" {
		s.mu.Unlock()
		return 0
	}
	next := statsPollEvery
	var due []string
	for _, id := range s.shown {
		if id == s.followed || !e.isRunning(id) {
			continue // streamed, or nothing to read
		}
		left := statsPollEvery - now.Sub(s.sampled[id])
		if left <= statsPollSlack {
			due = append(due, id)
			s.sampled[id] = now // tried: a failed read is not retried at once
			continue
		}
		next = min(next, left)
	}
	s.mu.Unlock()
	e.readStats(ctx, due, statsPollWait)
	return next
}

// readStats reads the stats of ids one-shot, together, within wait: a
// daemon that does not answer leaves the last figures.
func (e *Engine) readStats(ctx context.Context, ids []string, wait time.Duration) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	sem := make(chan struct{}, statsParallel)
	var wg sync.WaitGroup
	for _, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if smp, err := e.docker.Stats(ctx, id); err == nil {
				e.onStats(id, smp)
			}
		})
	}
	wg.Wait()
}

// reconcileStats opens the followed sandbox's stream when it runs and
// closes every other.
func (e *Engine) reconcileStats(ctx context.Context, wg *sync.WaitGroup) {
	s := e.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, st := range s.open {
		if id != s.followed {
			st.cancel()
			delete(s.open, id)
		}
	}
	id := s.followed
	if id == "" || s.open[id] != nil || !e.isRunning(id) {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	st := &statsStream{cancel: cancel}
	s.open[id] = st
	wg.Go(func() {
		defer cancel()
		err := e.docker.StreamStats(sctx, id, func(smp docker.StatsSample) { e.onStats(id, smp) })
		if err != nil && sctx.Err() == nil {
			e.log.Debug("stats stream ended", "id", short(id), "err", err)
		}
		s.mu.Lock()
		if s.open[id] == st { // it ended by itself (the sandbox stopped)
			delete(s.open, id)
		}
		s.mu.Unlock()
	})
}

func (e *Engine) isRunning(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.boxes[id]
	return ok && b.status == sandbox.StatusRunning
}

// onStats takes a sample into the sandbox's stats and publishes, soon and
// coalesced, when what the GUI shows of them changed.
func (e *Engine) onStats(id string, smp docker.StatsSample) {
	e.stats.mu.Lock()
	e.stats.sampled[id] = time.Now()
	e.stats.mu.Unlock()
	e.mu.Lock()
	b, ok := e.boxes[id]
	if !ok || b.status != sandbox.StatusRunning {
		e.mu.Unlock()
		return
	}
	next := sandbox.Stats{
		CPUPercent:  sandbox.CPUPercent(b.prev.CPUTotal, smp.CPUTotal, b.prev.SystemCPU, smp.SystemCPU, smp.OnlineCPUs),
		MemoryBytes: sandbox.MemoryUsage(smp.MemoryUsage, smp.MemoryStats),
		MemoryLimit: smp.MemoryLimit,
		Pids:        smp.Pids,
	}
	if b.prev.SystemCPU == 0 {
		next.CPUPercent = 0 // one sample gives no rate yet
	}
	changed := visiblyDifferent(b.stats, next)
	b.stats, b.prev = next, smp
	e.mu.Unlock()
	if changed {
		e.publishSoon()
	}
}

// visiblyDifferent reports whether the GUI would show b differently from a:
// CPU to a tenth of a percent, memory to a tenth of a megabyte, pids.
func visiblyDifferent(a, b sandbox.Stats) bool {
	return math.Abs(a.CPUPercent-b.CPUPercent) >= 0.05 || a.Pids != b.Pids || a.MemoryLimit != b.MemoryLimit ||
		max(a.MemoryBytes, b.MemoryBytes)-min(a.MemoryBytes, b.MemoryBytes) >= 100_000
}

// publishSoon publishes once statsPublishDelay has passed, however many
// changes ask for it meanwhile.
func (e *Engine) publishSoon() {
	s := e.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending {
		return
	}
	s.pending = true
	time.AfterFunc(statsPublishDelay, func() {
		s.mu.Lock()
		s.pending = false
		s.mu.Unlock()
		e.publish()
	})
}

// statsFresh is how old a sandbox's stats may be before list_sandboxes
// reads them again.
const statsFresh = time.Second

// statsWait bounds how long list_sandboxes waits for fresh stats.
const statsWait = time.Second

// freshenStats reads the stats of the running sandboxes whose stats are
// older than statsFresh, a few at a time, once: what list_sandboxes
// reports. CPU is the average since the previous read (0 the first time).
func (e *Engine) freshenStats(ctx context.Context) {
	e.mu.Lock()
	var ids []string
	for id, b := range e.boxes {
		if b.status == sandbox.StatusRunning {
			ids = append(ids, id)
		}
	}
	e.mu.Unlock()
	now := time.Now()
	e.stats.mu.Lock()
	stale := ids[:0]
	for _, id := range ids {
		if now.Sub(e.stats.sampled[id]) >= statsFresh {
			stale = append(stale, id)
		}
	}
	e.stats.mu.Unlock()
	// One-shot stats answer within a second (at the daemon's next stats
	// tick, read together); a daemon that does not answer within statsWait leaves the last figures in the list rather than
	// holding list_sandboxes (a frozen daemon must not stall it).
	e.readStats(ctx, stale, statsWait)
}
