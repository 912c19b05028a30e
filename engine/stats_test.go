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
	open := te.stats.Streams
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
	// A daemon slow to answer (a loaded machine) leaves a row's figures
	// for the next call: the list is asked again until it has them.
	var missing []string
	eventually(t, 30*time.Second, "list_sandboxes to give every sandbox its stats", func() bool {
		list, err := te.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		missing = missing[:0]
		for _, info := range list {
			if info.Stats.MemoryBytes == 0 || info.Stats.Pids == 0 {
				missing = append(missing, info.Name)
			}
		}
		return len(missing) == 0
	})
}
