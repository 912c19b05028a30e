package run

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestWatchDiskSparesACallThatOnlyTouchesAFullSandbox: in a sandbox already
// over its disk limit, a call whose process writes a few blocks of its own
// (and then deletes files to make room, as the stop's message asks) runs
// on; a call that goes on writing is stopped, saying the disk is full.
func TestWatchDiskSparesACallThatOnlyTouchesAFullSandbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		write := func(name string, n int) {
			t.Helper()
			if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("old", 3<<20)
		used, err := diskUsage(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		d := &Disk{upperDir: dir, known: true, seen: used} // measured between calls
		r := New(running{}, Limits{}, slog.New(slog.DiscardHandler))
		ctx, end := context.WithCancel(context.Background())
		defer end()
		var mu sync.Mutex
		var cause error
		go r.WatchDisk(ctx, fakeTarget{}, d, 1<<20, func(err error) { mu.Lock(); cause = err; mu.Unlock() })
		stopped := func() error { mu.Lock(); defer mu.Unlock(); return cause }

		write("marker", 8<<10) // the call's own few blocks
		time.Sleep(3 * diskPollLocal)
		synctest.Wait()
		if err := stopped(); err != nil {
			t.Fatalf("a call that wrote 8 KB in a sandbox already over its limit was stopped: %v", err)
		}
		write("more", 2<<20) // a writer
		time.Sleep(2 * diskPollLocal)
		synctest.Wait()
		var s *Stopped
		if err := stopped(); !errors.As(err, &s) || s.Outcome.End != sandbox.DiskFull {
			t.Fatalf("a call that wrote 2 MB more over the limit: stopped with %v, want a disk-full stop", err)
		}
	})
}
