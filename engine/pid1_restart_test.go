package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// restartWithImpostor makes the sandbox's PID 1 a program of its own, the
// way a model can: it replaces the programs the container's main command
// runs (replaceInits), stops the sandbox (stop_sandbox), and makes a call,
// which starts it again from its own files.
func (te *testEngine) restartWithImpostor(t *testing.T, id, impostor string) {
	t.Helper()
	te.replaceInits(t, id, impostor)
	ctx := context.Background()
	if _, err := te.Stop(ctx, te.owner, id); err != nil {
		t.Fatal(err)
	}
	// The stop's own "die" event may reach the engine after the next call
	// started the sandbox again, and end that call: the look is retried.
	var last sandbox.ExecOutcome
	eventually(t, 60*time.Second, "the sandbox started again with the sandbox's own program as PID 1", func() bool {
		out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "tr '\\0' ' ' </proc/1/cmdline"})
		last = out
		return err == nil && strings.Contains(out.Result.Stdout, "/root/impostor.py")
	})
	t.Logf("PID 1: %.80s", last.Result.Stdout)
}

// beats is an impostor PID 1 that notes, 50 times a second, whether the
// install's way out is open (/tmp/window, see slowApt).
const beats = `import os, time
while True:
    with open("/tmp/pid1-beats", "a") as f:
        f.write(("window" if os.path.exists("/tmp/window") else "-") + "\n")
    time.sleep(0.02)
`

// slowApt is an apt-get of the sandbox's own: its update holds the
// install's way out through the egress gate open (/tmp/window) for about a
// second and a half, noting each beat of its own.
const slowApt = `#!/usr/bin/dash
case " $* " in *" update "*) : > /tmp/window; n=0; while [ $n -lt 30 ]; do n=$((n+1)); echo update >> /tmp/apt-saw; /usr/bin/sleep.real 0.05; done; rm -f /tmp/window;; esac
exit 0
`

// TestInstallWindowStopsAnImpostorInit: a sandbox started again runs its
// init from its own files, so its PID 1 may be any program of the model's.
// While an install has the offline sandbox's way out open, that PID 1
// runs nothing; it runs again once the window has closed.
func TestInstallWindowStopsAnImpostorInit(t *testing.T) {
	te := newTestEngine(t)
	te.attachFirst = true
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "/usr/local/sbin/apt-get", Data: []byte(slowApt), Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	te.restartWithImpostor(t, id, beats)
	count := func() int { return strings.Count(te.command(t, id, "cat /tmp/pid1-beats").Stdout, "\n") }
	before := count()
	eventually(t, 10*time.Second, "the impostor PID 1 to run", func() bool { return count() > before })

	if _, err := te.InstallPackages(ctx, te.owner, id, sandbox.InstallRequest{Packages: []string{"jq"}, Manager: "apt"}, nil); err != nil {
		t.Fatalf("install: %v", err)
	}
	te.wantOffline(t, id)
	if saw := te.command(t, id, "cat /tmp/apt-saw").Stdout; strings.Count(saw, "update") < 30 {
		t.Fatalf("the install's apt-get update did not run its window: %q", saw)
	}
	lines := te.command(t, id, "cat /tmp/pid1-beats").Stdout
	if online := strings.Count(lines, "window"); online > 0 {
		t.Errorf("the sandbox's PID 1 ran %d times while the install had its way out open", online)
	}
	after := count()
	eventually(t, 10*time.Second, "the impostor PID 1 to run again after the install", func() bool { return count() > after })
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
	te := newTestEngine(t, func(cfg *config.Config) { cfg.Limits.DiskMB = 64 })
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
