package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestStatsOnlyForWhatIsShown: nothing is sampled until someone shows a
// sandbox; then only that one is read, one-shot, without a stream; the one
// followed (the GUI's selection) is streamed, and following none closes the
// stream. list_sandboxes reads the others' stats when it is called.
func TestStatsOnlyForWhatIsShown(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	shown := te.create(t, sandbox.CreateRequest{})
	other := te.create(t, sandbox.CreateRequest{})
	stats := func(id string) sandbox.Stats {
		info, err := te.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return info.Stats
	}
	open := func() int {
		te.stats.mu.Lock()
		defer te.stats.mu.Unlock()
		return len(te.stats.open)
	}
	if s := stats(shown.ID); s.MemoryBytes != 0 || open() != 0 {
		t.Fatalf("stats sampled with nobody looking: %+v, %d streams", s, open())
	}
	te.ShowStats([]string{shown.ID})
	eventually(t, 30*time.Second, "the shown sandbox's stats never came", func() bool {
		return stats(shown.ID).MemoryBytes > 0
	})
	if s := stats(other.ID); s.MemoryBytes != 0 || open() != 0 {
		t.Errorf("a sandbox nobody shows was sampled, or a row in view streamed: %+v, %d streams", s, open())
	}
	te.FollowStats(shown.ID)
	eventually(t, 30*time.Second, "the followed sandbox was not streamed", func() bool { return open() == 1 })
	if s := stats(other.ID); s.MemoryBytes != 0 {
		t.Errorf("a sandbox nobody shows was sampled: %+v", s)
	}
	te.FollowStats("")
	te.ShowStats(nil)
	eventually(t, 30*time.Second, "the stream outlived the window", func() bool { return open() == 0 })
	list, err := te.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range list {
		if info.Stats.MemoryBytes == 0 || info.Stats.Pids == 0 {
			t.Errorf("list_sandboxes gave %s no stats: %+v", info.Name, info.Stats)
		}
	}
}

// TestStatsPollEvery: a row in view is read when it comes into view, then
// not again before statsPollEvery (less the slack that batches rows), and
// a stopped sandbox is not read at all.
func TestStatsPollEvery(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	a := te.create(t, sandbox.CreateRequest{})
	b := te.create(t, sandbox.CreateRequest{})
	if _, err := te.Stop(ctx, te.owner, b.ID); err != nil {
		t.Fatal(err)
	}
	s := te.stats
	s.mu.Lock()
	s.shown = []string{a.ID, b.ID} // as ShowStats, without waking statsLoop
	s.mu.Unlock()
	sampled := func(id string) time.Time {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.sampled[id]
	}
	t0 := time.Now()
	if next := te.pollStats(ctx, t0); next != statsPollEvery {
		t.Errorf("after the first read, the next is due in %v, want %v", next, statsPollEvery)
	}
	read := sampled(a.ID) // when the read answered
	if read.Before(t0) {
		t.Fatalf("the row that came into view was not read: %v", read)
	}
	if got := sampled(b.ID); !got.IsZero() {
		t.Errorf("a stopped sandbox was read: %v", got)
	}
	if info, err := te.Get(ctx, a.ID); err != nil || info.Stats.MemoryBytes == 0 {
		t.Errorf("the read gave no stats: %+v, %v", info.Stats, err)
	}
	if next := te.pollStats(ctx, read.Add(time.Second)); next != statsPollEvery-time.Second {
		t.Errorf("a second later the next read is due in %v, want %v", next, statsPollEvery-time.Second)
	}
	if got := sampled(a.ID); !got.Equal(read) {
		t.Errorf("read again after a second: %v", got)
	}
	te.pollStats(ctx, read.Add(statsPollEvery-statsPollSlack))
	if got := sampled(a.ID); got.Equal(read) {
		t.Errorf("not read again when due")
	}
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
