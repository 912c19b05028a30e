package run

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
)

// fakeStats is Docker's stats as the test sets them: each read of a
// sandbox returns its CPU time, a millisecond more than the last, stamped
// with the test's clock; reads are recorded, and wait for release when it
// is set.
type fakeStats struct {
	mu      sync.Mutex
	clock   *time.Time
	reads   map[string][]time.Time
	cpu     map[string]time.Duration
	release chan struct{}
	err     error
	running int // reads under way
	most    int // the most reads under way at once
}

func newFakeStats(clock *time.Time) *fakeStats {
	return &fakeStats{clock: clock, reads: map[string][]time.Time{}, cpu: map[string]time.Duration{}}
}

func (f *fakeStats) Stats(ctx context.Context, id string) (runtime.StatsSample, error) {
	f.mu.Lock()
	at := *f.clock
	f.reads[id] = append(f.reads[id], at)
	f.cpu[id] += time.Millisecond
	used, release, err := f.cpu[id], f.release, f.err
	f.running++
	f.most = max(f.most, f.running)
	f.mu.Unlock()
	if release != nil {
		<-release
	}
	f.mu.Lock()
	f.running--
	f.mu.Unlock()
	if err != nil {
		return runtime.StatsSample{}, err
	}
	return runtime.StatsSample{Read: at, CPUTotal: uint64(used)}, nil
}

func (f *fakeStats) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.reads {
		n += len(r)
	}
	return n
}

// countingCPU is a CPUUsage that counts what it was asked.
type countingCPU struct {
	mu    sync.Mutex
	asked int
	inner CPUUsage
}

func (c *countingCPU) CPU(id string) (CPUReading, bool) {
	c.mu.Lock()
	c.asked++
	c.mu.Unlock()
	return c.inner.CPU(id)
}

// TestDockerStatsNeverReadWhenCgroupsAnswer: when the cgroup files answer
// for every sandbox, the fallback never asks Docker, however long the watch
// runs.
func TestDockerStatsNeverReadWhenCgroupsAnswer(t *testing.T) {
	clock := time.Unix(1e9, 0)
	cgroups := &fakeCPU{ok: true, clock: &clock}
	stats := newFakeStats(&clock)
	reader := NewStatsCPU(stats, slog.New(slog.DiscardHandler))
	reader.now = func() time.Time { return clock }
	then := &countingCPU{inner: reader}
	cpu := fallbackCPU{first: cgroups, then: then}
	for range 60 {
		clock = clock.Add(time.Second)
		for i := range 20 {
			if _, ok := cpu.CPU(fmt.Sprint("sandbox", i)); !ok {
				t.Fatal("the cgroups' reading was not returned")
			}
		}
		reader.Read(context.Background(), time.Second)
	}
	reader.Wait()
	if then.asked != 0 || stats.total() != 0 {
		t.Errorf("with the cgroups answering, the Docker source was asked %d times and Docker read %d times", then.asked, stats.total())
	}

	// A sandbox whose cgroup does not answer is the only one read.
	cgroups.ok = false
	cpu.CPU("remote")
	reader.Read(context.Background(), time.Second)
	reader.Wait()
	if n := stats.total(); n != 1 || len(stats.reads["remote"]) != 1 {
		t.Errorf("after one sandbox's cgroup stopped answering, Docker was read %d times: %v", n, stats.reads)
	}
}

// TestDockerStatsSpreadAndBounded: 50 sandboxes asked about every second
// are each read every 5 s, a fifth of them each second rather than all at
// once, and no more than statsInFlight reads run at once. CPU returns the
// latest reading, with Docker's time of reading, until the next.
func TestDockerStatsSpreadAndBounded(t *testing.T) {
	clock := time.Unix(1e9, 0)
	stats := newFakeStats(&clock)
	reader := NewStatsCPU(stats, slog.New(slog.DiscardHandler))
	reader.now = func() time.Time { return clock }
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = fmt.Sprint("sandbox", i)
	}
	if _, ok := reader.CPU(ids[0]); ok {
		t.Fatal("a reading before any read")
	}
	for tick := range 60 {
		clock = clock.Add(time.Second)
		for _, id := range ids {
			reader.CPU(id)
		}
		before := stats.total()
		reader.Read(context.Background(), time.Second)
		reader.Wait()
		if n := stats.total() - before; n != 10 {
			t.Errorf("second %d: %d reads, want 10 (a fifth of the sandboxes)", tick, n)
		}
	}
	for _, id := range ids {
		reads := stats.reads[id]
		if len(reads) != 12 {
			t.Errorf("%s read %d times in 60 s, want 12", id, len(reads))
		}
		for i := 1; i < len(reads); i++ {
			if gap := reads[i].Sub(reads[i-1]); gap < statsEvery {
				t.Errorf("%s read twice within %s", id, gap)
			}
		}
	}
	last := stats.reads[ids[0]][len(stats.reads[ids[0]])-1]
	for range 2 {
		if r, ok := reader.CPU(ids[0]); !ok || !r.At.Equal(last) || r.Used != time.Duration(len(stats.reads[ids[0]]))*time.Millisecond {
			t.Errorf("CPU: %+v %v, want the last reading, at %v", r, ok, last)
		}
	}
	if stats.most > statsInFlight {
		t.Errorf("%d reads at once, want at most %d", stats.most, statsInFlight)
	}

	// Reads that hang: no more than statsInFlight at once, none started
	// again for a sandbox whose read has not ended, and all end when the
	// watch's context does.
	stats.release = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	for range 10 {
		stats.mu.Lock() // the hanging reads read the clock
		clock = clock.Add(time.Second)
		stats.mu.Unlock()
		for _, id := range ids {
			reader.CPU(id)
		}
		reader.Read(ctx, time.Second)
	}
	reader.mu.Lock()
	started := 0
	for _, r := range reader.sandboxes {
		if r.reading {
			started++
		}
	}
	reader.mu.Unlock()
	if started != len(ids) {
		t.Errorf("%d reads started in 10 s of hanging reads, want one per sandbox (%d)", started, len(ids))
	}
	cancel()
	close(stats.release)
	reader.Wait()
	if stats.most > statsInFlight {
		t.Errorf("%d reads at once, want at most %d", stats.most, statsInFlight)
	}
}

// TestDockerStatsKeepsTheLastReadingOnErrors: a failed read leaves the last
// reading (the watch skips it as seen); a stopped sandbox (a zero sample)
// has none.
func TestDockerStatsKeepsTheLastReadingOnErrors(t *testing.T) {
	clock := time.Unix(1e9, 0)
	stats := newFakeStats(&clock)
	reader := NewStatsCPU(stats, slog.New(slog.DiscardHandler))
	reader.now = func() time.Time { return clock }
	step := func() (CPUReading, bool) {
		clock = clock.Add(statsEvery)
		reader.CPU("a")
		reader.Read(context.Background(), time.Second)
		reader.Wait()
		return reader.CPU("a")
	}
	first, ok := step()
	if !ok {
		t.Fatal("no reading")
	}
	stats.err = fmt.Errorf("daemon busy")
	if r, ok := step(); !ok || r != first {
		t.Errorf("after a failed read: %+v %v, want %+v", r, ok, first)
	}
	stats.err = nil
	stats.mu.Lock()
	stats.clock = new(time.Time) // a zero sample: Docker's answer for a stopped container
	stats.cpu["a"] = -time.Millisecond
	stats.mu.Unlock()
	if r, ok := step(); ok {
		t.Errorf("a stopped sandbox's reading: %+v", r)
	}
}
