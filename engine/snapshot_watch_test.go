package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestSnapshotsArePublished: a watcher (the app) hears of every change to
// a sandbox's snapshots, taken, deleted or restored, as it happens: the
// sandbox's SnapshotsChanged moves on.
func TestSnapshotsArePublished(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	snapshotImages(t, te)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := te.create(t, sandbox.CreateRequest{Name: "watched"}).ID
	w := te.Watch(ctx)
	seen := func() uint64 {
		t.Helper()
		for {
			snap, err := w.Next(ctx)
			if err != nil {
				t.Fatalf("no snapshot of the engine's state: %v", err)
			}
			for _, info := range snap.Sandboxes {
				if info.ID == id {
					return info.SnapshotsChanged
				}
			}
		}
	}
	before := seen()
	s, err := te.Snapshot(ctx, te.owner, id, sandbox.SnapshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	taken := seen()
	if taken == before {
		t.Errorf("the state published after snapshot_sandbox answered says nothing changed (%d)", taken)
	}
	if err := te.DeleteSnapshot(ctx, te.owner, id, s.ID); err != nil {
		t.Fatal(err)
	}
	if deleted := seen(); deleted == taken {
		t.Errorf("the state published after delete_snapshot says nothing changed (%d)", deleted)
	}
}
