//go:build unix

package securitytest

import (
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// diskUsed is what the files under dir take on the host's disk (allocated
// blocks: a sparse file counts for what it holds).
func diskUsed(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

// TestSnapshotTmpfsIsBounded (F57): what a strict sandbox's tmpfs workdir
// sends for a snapshot is the model's. Two sparse 1.5 GB files on the
// 512 MB tmpfs, and 150 MB of random bytes with limits.max_snapshot_mb =
// 100, each leave the state dir as it was, refused with the sizes; a
// sparse file that fits is kept sparse on the host and comes back whole.
func TestSnapshotTmpfsIsBounded(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.Sandbox.Profile = config.ProfileStrict
		c.Limits.SnapshotMB = 100
		c.Pool.Size = 0
	})
	c := e.client
	id := c.sandbox(t, nil)
	snapshots := filepath.Join(e.cfg.StateDir, "snapshots")

	t.Run("sparse files far larger than the tmpfs", func(t *testing.T) {
		c.command(t, id, "truncate -s 1500M a b", 30)
		r := c.refused(t, "snapshot_sandbox", map[string]any{"sandbox_id": id}, "memory_mb", "sparse")
		t.Log(r.text)
		if n := diskUsed(t, snapshots); n > 8<<20 {
			t.Errorf("the refused snapshot left %d MB in the state dir", n>>20)
		}
		c.command(t, id, "rm a b", 30)
	})

	t.Run("more data than the budget", func(t *testing.T) {
		c.command(t, id, "head -c 150M /dev/urandom > big", 60)
		r := c.refused(t, "snapshot_sandbox", map[string]any{"sandbox_id": id}, "limits.max_snapshot_mb", "100 MB", "/workspace", "delete_snapshot")
		t.Log(r.text)
		if n := diskUsed(t, snapshots); n > 8<<20 {
			t.Errorf("the refused snapshot (%s) left %d MB in the state dir", r.text, n>>20)
		}
		c.command(t, id, "rm big", 30)
	})

	t.Run("a sparse file is stored sparse", func(t *testing.T) {
		c.command(t, id, "truncate -s 200M s && printf hi | dd of=s bs=1 seek=1000 conv=notrunc status=none", 30)
		r := c.ok(t, "snapshot_sandbox", map[string]any{"sandbox_id": id})
		if n := diskUsed(t, snapshots); n > 8<<20 {
			t.Errorf("a snapshot of a 200 MB sparse file holding 2 bytes takes %d MB of the host's disk", n>>20)
		}
		if size := r.num("size_bytes"); size > 8<<20 {
			t.Errorf("the snapshot says it takes %.0f bytes", size)
		}
		c.command(t, id, "rm s", 30)
		c.ok(t, "restore_sandbox", map[string]any{"sandbox_id": id, "snapshot_id": r.str("snapshot_id")})
		if out := c.command(t, id, "stat -c %s s && head -c 1002 s | tail -c 2", 30); strings.TrimSpace(out.stdout) != "209715200\nhi" {
			t.Errorf("the restored sparse file: %q, want its size and its two bytes", out.stdout)
		}
	})
}

// TestConcurrentSnapshotsHoldTheLimits (F58): six snapshot_sandbox calls
// at once on a sandbox with 28 MB of changes, with limits.max_snapshots = 2
// and limits.max_snapshot_mb = 40, leave at most two snapshots taking at
// most 40 MB; the others are refused naming the limit.
func TestConcurrentSnapshotsHoldTheLimits(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.Limits.MaxSnapshots, c.Limits.SnapshotMB = 2, 40
		c.Pool.Size = 0
	})
	c := e.client
	id := c.sandbox(t, nil)
	c.command(t, id, "head -c 28M /dev/urandom > data", 60)
	var wg sync.WaitGroup
	results := make([]result, 6)
	for i := range results {
		wg.Go(func() { results[i] = c.call(t, "snapshot_sandbox", map[string]any{"sandbox_id": id}) })
	}
	wg.Wait()
	for _, r := range results {
		if r.err != nil {
			t.Fatalf("snapshot_sandbox: %v", r)
		}
		if r.isError && !strings.Contains(r.text, "limits.max_snapshot") {
			t.Errorf("a refusal that names no limit: %s", r.text)
		}
	}
	list := c.ok(t, "list_snapshots", map[string]any{"sandbox_id": id})
	snaps, _ := list.data["snapshots"].([]any)
	var total float64
	for _, s := range snaps {
		total += s.(map[string]any)["size_bytes"].(float64)
	}
	if len(snaps) > 2 || total > 40<<20 {
		t.Errorf("six snapshots at once left %d snapshots taking %.0f MB; the limits are 2 and 40 MB", len(snaps), total/(1<<20))
	}
}
