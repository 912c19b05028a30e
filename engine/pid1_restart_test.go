package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// restartWithImpostor makes the sandbox's PID 1 a program of its own, the
// way a model can: it replaces the programs the container's main command
// runs (replaceInits), stops the sandbox (stop_sandbox), and makes a call,
// which starts it again from its own files.
func (te *testEngine) restartWithImpostor(t *testing.T, id, impostor string) {
	t.Helper()
	te.replaceInits(t, id, impostor)
	if _, err := te.Stop(context.Background(), te.owner, id); err != nil {
		t.Fatal(err)
	}
	if cmdline, _, _ := te.pid1(t, id); !strings.Contains(cmdline, "/root/impostor.py") {
		t.Fatalf("PID 1 of the sandbox started again: %q; want the sandbox's own program", cmdline)
	}
}

// fill is an impostor PID 1 that writes 10 MB files, at most 50 MB/s and
// 2 GB in all, from its start.
const fill = `import time
for i in range(200):
    with open("/workspace/w%d" % i, "wb") as f:
        f.write(bytes(10_000_000))
    time.sleep(0.2)
`

// TestDiskWatchdogDoesNotSpareAnImpostorInit: the disk watch between calls
// spares PID 1, which no process inside can kill, only while it is an init
// of Sandtray's. A sandbox started again whose PID 1 is the model's writer
// is stopped the first time the watch acts, and its log says why.
func TestDiskWatchdogDoesNotSpareAnImpostorInit(t *testing.T) {
	te := newTestEngine(t, func(cfg *Config) { cfg.Limits.DiskMB = 64 })
	te.attachFirst = true
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	te.restartWithImpostor(t, id, fill)
	eventually(t, 90*time.Second, "the disk watch to act", func() bool {
		logs, err := te.Logs(ctx, id, 20)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range logs {
			if a.Tool == "disk_watchdog" {
				if !strings.Contains(a.Stderr, "its PID 1 is not an init Sandtray started") {
					t.Fatalf("the disk watch's first act spared the sandbox's PID 1: %q", a.Stderr)
				}
				t.Log(a.Stderr)
				return true
			}
		}
		return false
	})
	eventually(t, 10*time.Second, "the sandbox stopped by the disk watch", func() bool {
		info, err := te.Get(ctx, id)
		return err == nil && info.Status == sandbox.StatusStopped
	})
}
