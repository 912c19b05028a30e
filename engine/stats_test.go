package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestStatsOnlyForWhatIsShown: nothing is sampled until someone shows a
// sandbox; then only that one is streamed, and showing none closes the
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
	if s := stats(other.ID); s.MemoryBytes != 0 || open() != 1 {
		t.Errorf("a sandbox nobody shows was sampled: %+v, %d streams", s, open())
	}
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
