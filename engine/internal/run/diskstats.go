package run

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
)

const (
	// statsEvery is how often the watch between calls reads one sandbox's
	// CPU time from Docker's stats, where it cannot read the cgroup files:
	// each read costs the daemon far more than a file read costs the engine.
	statsEvery = 5 * time.Second
	// statsInFlight bounds the reads under way at once. Docker 20.10
	// answers a one-shot read at its stats collector's next tick, up to a
	// second later (the same tick for every read in flight), so it bounds
	// how many sandboxes are read every statsEvery there: 80. Newer
	// daemons answer at once.
	statsInFlight = 16
	// statsTimeout bounds one read.
	statsTimeout = 10 * time.Second
)

// Stats is Docker's one-shot resource sample of a container.
type Stats interface {
	Stats(ctx context.Context, id string) (runtime.StatsSample, error)
}

// StatsCPU reads sandboxes' CPU time from Docker's one-shot stats: the
// watch between calls' source where the host's cgroup files cannot be read
// (Docker Desktop, a daemon on another machine, Podman in a VM). CPU never
// waits on Docker: it returns the latest reading (stamped with the
// daemon's time of reading) and asks for the sandbox to be read; Read, once
// per period of the watch, starts the reads that are due: each sandbox at
// most every statsEvery, spread over that time (a period's share of the
// sandboxes asked for, oldest first), at most statsInFlight at once.
type StatsCPU struct {
	stats Stats
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex
	sandboxes map[string]*statsRead // by container id; guarded by mu
	inFlight  chan struct{}         // a slot per read under way (statsInFlight)
	wg        sync.WaitGroup        // the reads started, waiting for a slot or under way
}

// statsRead is what StatsCPU keeps about one sandbox.
type statsRead struct {
	last    CPUReading
	ok      bool      // last is a reading of the sandbox running
	asked   bool      // CPU was called since the last Read
	due     time.Time // no read starts before this
	reading bool      // a read is started (waiting for a slot or under way)
	failing bool      // the last read failed (logged once until one works)
}

// NewStatsCPU returns a source that reads CPU time from stats, and logs
// to log when a sandbox's reads start failing.
func NewStatsCPU(stats Stats, log *slog.Logger) *StatsCPU {
	return &StatsCPU{stats: stats, log: log, every: statsEvery, now: time.Now,
		sandboxes: map[string]*statsRead{}, inFlight: make(chan struct{}, statsInFlight)}
}

// CPU is the latest reading of the sandbox id, false before the first (or
// when Docker said it is not running); the next Read reads it when due.
func (s *StatsCPU) CPU(id string) (CPUReading, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.sandboxes[id]
	if r == nil {
		r = &statsRead{} // due at once
		s.sandboxes[id] = r
	}
	r.asked = true
	return r.last, r.ok
}

// Read starts, in goroutines that end with ctx at the latest, the reads
// due among the sandboxes CPU was asked about since the last Read; period
// is how often it is called. It never waits for them (Wait does); they
// wait for one of statsInFlight slots.
func (s *StatsCPU) Read(ctx context.Context, period time.Duration) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	asked := 0
	var due []string
	for id, r := range s.sandboxes {
		if !r.asked {
			continue
		}
		r.asked = false
		asked++
		if !r.reading && !now.Before(r.due) {
			due = append(due, id)
		}
	}
	// Oldest first; ties (sandboxes first seen together) by id.
	slices.SortFunc(due, func(a, b string) int {
		if c := s.sandboxes[a].due.Compare(s.sandboxes[b].due); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// This period's share of one read per sandbox per statsEvery, so that
	// sandboxes seen together are read apart, and the reads stay apart.
	share := int((int64(asked)*int64(period) + int64(s.every) - 1) / int64(s.every))
	for _, id := range due[:min(len(due), share)] {
		r := s.sandboxes[id]
		r.reading, r.due = true, now.Add(s.every)
		s.wg.Add(1)
		go s.read(ctx, id, r)
	}
}

// read reads one sandbox's stats into r.
func (s *StatsCPU) read(ctx context.Context, id string, r *statsRead) {
	defer s.wg.Done()
	var sample runtime.StatsSample
	var err error
	select {
	case s.inFlight <- struct{}{}:
		rctx, cancel := context.WithTimeout(ctx, statsTimeout)
		sample, err = s.stats.Stats(rctx, id)
		cancel()
		<-s.inFlight
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r.reading = false
	switch {
	case err != nil:
		// The last reading stays: the watch skips it as already seen.
		if !r.failing && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("read a sandbox's CPU time from Docker's stats for the disk watch between calls", "id", id, "err", err)
		}
		r.failing = true
	case sample.Read.IsZero() && sample.CPUTotal == 0:
		r.ok, r.failing = false, false // not running
	default:
		at := sample.Read
		if at.IsZero() {
			at = s.now()
		}
		r.last, r.ok, r.failing = CPUReading{Used: time.Duration(sample.CPUTotal), At: at}, true, false
	}
}

// Forget drops what is kept about the sandboxes keep says no to.
func (s *StatsCPU) Forget(keep func(id string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.sandboxes {
		if !keep(id) {
			delete(s.sandboxes, id)
		}
	}
}

// Wait waits for the reads under way.
func (s *StatsCPU) Wait() { s.wg.Wait() }

// fallbackCPU reads a sandbox's CPU time from first, and from then only
// when first cannot: then is never asked about a sandbox first answers
// for.
type fallbackCPU struct {
	first, then CPUUsage
}

func (f fallbackCPU) CPU(id string) (CPUReading, bool) {
	if r, ok := f.first.CPU(id); ok {
		return r, true
	}
	return f.then.CPU(id)
}
