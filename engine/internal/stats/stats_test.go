package stats

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// fakeDocker answers stats reads from memory: the nth sample of a sandbox
// has used n tenths of a second of CPU in n seconds of one CPU (10%), and
// 10 MB of memory plus grow bytes a sample.
type fakeDocker struct {
	mu      sync.Mutex
	n       map[string]uint64 // samples given, per sandbox
	reads   map[string]int    // one-shot reads answered
	streams map[string]int    // streams opened
	live    map[string]int    // streams open now
	ends    map[string]bool   // the stream ends by itself after its next sample
	frozen  bool              // one-shot reads never answer
	grow    uint64
}

func newFakeDocker() *fakeDocker {
	return &fakeDocker{n: map[string]uint64{}, reads: map[string]int{}, streams: map[string]int{},
		live: map[string]int{}, ends: map[string]bool{}}
}

func (d *fakeDocker) sampleLocked(id string) runtime.StatsSample {
	d.n[id]++
	n := d.n[id]
	return runtime.StatsSample{Read: time.Now(), CPUTotal: n * 1e8, SystemCPU: n * 1e9, OnlineCPUs: 1,
		MemoryUsage: 10<<20 + n*d.grow, MemoryLimit: 1 << 30, Pids: 3}
}

func (d *fakeDocker) Stats(ctx context.Context, id string) (runtime.StatsSample, error) {
	d.mu.Lock()
	if d.frozen {
		d.mu.Unlock()
		<-ctx.Done()
		return runtime.StatsSample{}, ctx.Err()
	}
	defer d.mu.Unlock()
	d.reads[id]++
	return d.sampleLocked(id), nil
}

// StreamStats sends a sample a second until ctx is done or the stream is
// told to end.
func (d *fakeDocker) StreamStats(ctx context.Context, id string, fn func(runtime.StatsSample)) error {
	d.mu.Lock()
	d.streams[id]++
	d.live[id]++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.live[id]--
		d.mu.Unlock()
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		d.mu.Lock()
		smp, end := d.sampleLocked(id), d.ends[id]
		d.mu.Unlock()
		fn(smp)
		if end {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (d *fakeDocker) count(m map[string]int, id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return m[id]
}

// fakeRegistry says which sandboxes run, and counts what the Sampler
// publishes, as the engine's registry does.
type fakeRegistry struct {
	mu        sync.Mutex
	running   map[string]bool
	published int
}

func newFakeRegistry(running ...string) *fakeRegistry {
	k := &fakeRegistry{running: map[string]bool{}}
	for _, id := range running {
		k.running[id] = true
	}
	return k
}

func (k *fakeRegistry) isRunning(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.running[id]
}

func (k *fakeRegistry) publish() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.published++
}

func (k *fakeRegistry) setRunning(id string, on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.running[id] = on
}

func (k *fakeRegistry) publishes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.published
}

func (s *Sampler) sampledAt(id string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sampled[id]
}

// run runs s's loop until the test ends, and checks it returns only once
// every stream has closed.
func run(t *testing.T, s *Sampler, d *fakeDocker) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		d.mu.Lock()
		defer d.mu.Unlock()
		for id, n := range d.live {
			if n != 0 {
				t.Errorf("Run returned with %d streams of %s open", n, id)
			}
		}
	})
}

// TestPollEvery: a row in view is read when it comes into view, then not
// again before pollEvery (less the slack that batches rows), and a stopped
// sandbox is not read at all.
func TestPollEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, k := newFakeDocker(), newFakeRegistry("a")
		s := New(d, k.isRunning, k.publish, nil)
		ctx := context.Background()
		s.shown = []string{"a", "b"} // as Show, without waking Run
		t0 := time.Now()
		if next := s.poll(ctx, t0); next != pollEvery {
			t.Errorf("after the first read, the next is due in %v, want %v", next, pollEvery)
		}
		read := s.sampledAt("a") // when the read answered
		if read.Before(t0) || d.count(d.reads, "a") != 1 {
			t.Fatalf("the row that came into view was not read: %v", read)
		}
		if got := s.sampledAt("b"); !got.IsZero() || d.count(d.reads, "b") != 0 {
			t.Errorf("a stopped sandbox was read: %v", got)
		}
		if got := s.Of("a"); got.MemoryBytes == 0 {
			t.Errorf("the read gave no stats: %+v", got)
		}
		time.Sleep(time.Second)
		if next := s.poll(ctx, time.Now()); next != pollEvery-time.Second {
			t.Errorf("a second later the next read is due in %v, want %v", next, pollEvery-time.Second)
		}
		if got := s.sampledAt("a"); !got.Equal(read) || d.count(d.reads, "a") != 1 {
			t.Errorf("read again after a second: %v", got)
		}
		time.Sleep(pollEvery - pollSlack - time.Second)
		s.poll(ctx, time.Now())
		if got := s.sampledAt("a"); got.Equal(read) || d.count(d.reads, "a") != 2 {
			t.Errorf("not read again when due")
		}
	})
}

// TestRunPolls: the loop reads a row as it comes into view, then every
// pollEvery; rows that came into view within pollSlack of each other are
// read together from then on; nothing is read once no row is in view.
func TestRunPolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, k := newFakeDocker(), newFakeRegistry("a", "b")
		s := New(d, k.isRunning, k.publish, nil)
		run(t, s, d)
		start := time.Now()
		reads := func(want int) {
			t.Helper()
			synctest.Wait()
			if a, b := d.count(d.reads, "a"), d.count(d.reads, "b"); a != want || b != want {
				t.Errorf("after %v: %d and %d reads, want %d", time.Since(start), a, b, want)
			}
		}
		s.Show([]string{"a"})
		synctest.Wait()
		time.Sleep(time.Second)
		s.Show([]string{"a", "b"})
		reads(1)
		time.Sleep(pollEvery - time.Second - time.Millisecond)
		reads(1)
		time.Sleep(time.Millisecond) // a is due, b nearly: both are read
		reads(2)
		time.Sleep(pollEvery - time.Millisecond)
		reads(2)
		time.Sleep(time.Millisecond)
		reads(3)
		s.Show(nil)
		time.Sleep(time.Minute)
		reads(3)
	})
}

// TestRunFollows: the followed sandbox is streamed, not polled; following
// none closes the stream; a stream that ends (the sandbox stopped) is
// opened again when a later look finds the sandbox running.
func TestRunFollows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, k := newFakeDocker(), newFakeRegistry("a")
		s := New(d, k.isRunning, k.publish, nil)
		run(t, s, d)
		s.Follow("b") // not running
		synctest.Wait()
		if s.Streams() != 0 || d.count(d.streams, "b") != 0 {
			t.Errorf("a sandbox not running was streamed")
		}
		s.Show([]string{"a"})
		s.Follow("a")
		synctest.Wait()
		if s.Streams() != 1 || d.count(d.live, "a") != 1 {
			t.Fatalf("the followed sandbox was not streamed: %d streams", s.Streams())
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if d.count(d.reads, "a") != 0 {
			t.Errorf("the followed sandbox was polled as well")
		}
		if got := s.Of("a"); got.MemoryBytes == 0 || got.CPUPercent < 9.9 || got.CPUPercent > 10.1 {
			t.Errorf("the stream gave %+v, want 10 MB at 10%% CPU", got)
		}
		s.Follow("")
		synctest.Wait()
		if s.Streams() != 0 || d.count(d.live, "a") != 0 {
			t.Errorf("the stream outlived the selection: %d streams", s.Streams())
		}

		s.Follow("a")
		synctest.Wait()
		d.mu.Lock()
		d.ends["a"] = true
		d.mu.Unlock()
		k.setRunning("a", false)
		time.Sleep(time.Second)
		synctest.Wait()
		if s.Streams() != 0 {
			t.Errorf("a stream that ended stayed open")
		}
		time.Sleep(pollEvery)
		synctest.Wait()
		if n := d.count(d.streams, "a"); n != 2 {
			t.Errorf("a stopped sandbox was streamed again: %d streams", n)
		}
		d.mu.Lock()
		d.ends["a"] = false
		d.mu.Unlock()
		k.setRunning("a", true)
		time.Sleep(pollEvery)
		synctest.Wait()
		if n := d.count(d.streams, "a"); n != 3 || s.Streams() != 1 {
			t.Errorf("the followed sandbox, started again, was not streamed: %d streams", n)
		}
	})
}

// TestPublishCoalesced: the changes within publishDelay of the first are
// published once, publishDelay after it; samples the GUI would show the
// same are not published at all.
func TestPublishCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, k := newFakeDocker(), newFakeRegistry("a", "b")
		d.grow = 1 << 20
		s := New(d, k.isRunning, k.publish, nil)
		ctx := context.Background()
		for range 3 {
			s.read(ctx, []string{"a", "b"}, pollWait)
			time.Sleep(publishDelay / 4)
		}
		synctest.Wait()
		if n := k.publishes(); n != 0 {
			t.Errorf("published %d times before the delay", n)
		}
		time.Sleep(publishDelay / 4)
		synctest.Wait()
		if n := k.publishes(); n != 1 {
			t.Errorf("published %d times after the delay, want 1", n)
		}
		d.grow = 0
		s.read(ctx, []string{"a"}, pollWait) // back to 10 MB: a change
		time.Sleep(publishDelay)
		synctest.Wait()
		if n := k.publishes(); n != 2 {
			t.Fatalf("a change after the publish was published %d times, want 2 publishes", n)
		}
		s.read(ctx, []string{"a"}, pollWait) // 10 MB and 10% CPU, as before
		s.read(ctx, []string{"a"}, pollWait)
		time.Sleep(2 * publishDelay)
		synctest.Wait()
		if n := k.publishes(); n != 2 {
			t.Errorf("samples that change nothing visible were published: %d publishes", n)
		}
	})
}

// TestFreshen: list_sandboxes reads only the stats older than fresh, and a
// daemon that does not answer holds it freshWait at most.
func TestFreshen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, k := newFakeDocker(), newFakeRegistry("a", "b")
		s := New(d, k.isRunning, k.publish, nil)
		ctx := context.Background()
		s.read(ctx, []string{"a"}, pollWait)
		s.Freshen(ctx, []string{"a", "b"})
		if a, b := d.count(d.reads, "a"), d.count(d.reads, "b"); a != 1 || b != 1 {
			t.Errorf("read a %d times and b %d, want once each", a, b)
		}
		time.Sleep(fresh)
		d.mu.Lock()
		d.frozen = true
		d.mu.Unlock()
		start := time.Now()
		s.Freshen(ctx, []string{"a", "b"})
		if took := time.Since(start); took != freshWait {
			t.Errorf("a frozen daemon held Freshen %v, want %v", took, freshWait)
		}
	})
}

func TestVisiblyDifferent(t *testing.T) {
	base := sandbox.Stats{CPUPercent: 1.0, MemoryBytes: 10 << 20, MemoryLimit: 1 << 30, Pids: 3}
	with := func(f func(*sandbox.Stats)) sandbox.Stats { s := base; f(&s); return s }
	for _, c := range []struct {
		next sandbox.Stats
		want bool
	}{
		{base, false},
		{with(func(s *sandbox.Stats) { s.CPUPercent = 1.01 }), false},
		{with(func(s *sandbox.Stats) { s.MemoryBytes += 4096 }), false},
		{with(func(s *sandbox.Stats) { s.CPUPercent = 1.2 }), true},
		{with(func(s *sandbox.Stats) { s.MemoryBytes -= 200_000 }), true},
		{with(func(s *sandbox.Stats) { s.Pids = 4 }), true},
	} {
		if got := visiblyDifferent(base, c.next); got != c.want {
			t.Errorf("visiblyDifferent(%+v) = %v, want %v", c.next, got, c.want)
		}
	}
}

// TestFiguresOfRunningSandboxes: only a running sandbox's samples are kept,
// and Forget (it stopped) drops its figures.
func TestFiguresOfRunningSandboxes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, k := newFakeDocker(), newFakeRegistry("a")
		s := New(d, k.isRunning, k.publish, nil)
		s.read(context.Background(), []string{"a", "b"}, pollWait)
		if got := s.Of("a"); got.MemoryBytes == 0 {
			t.Errorf("the running sandbox's stats: %+v, want its memory", got)
		}
		if got := s.Of("b"); got != (sandbox.Stats{}) {
			t.Errorf("a sandbox not running has stats %+v", got)
		}
		s.Forget("a")
		if got := s.Of("a"); got != (sandbox.Stats{}) {
			t.Errorf("after Forget: %+v, want none", got)
		}
	})
}
