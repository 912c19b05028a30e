package engine

import (
	"bytes"
	"context"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/internal/testwait"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestDiskWatchdogStopsASandboxThatGoesOnGrowing: a writer the watch
// between calls spares when it kills (here a process Docker started, as a
// kernel is) goes on growing the sandbox past limits.disk_mb outside any
// call; the sandbox is then stopped, its log says why, and it starts again
// on next use with its files. Close then waits for the watch's goroutine.
func TestDiskWatchdogStopsASandboxThatGoesOnGrowing(t *testing.T) {
	te := newTestEngine(t, func(cfg *config.Config) { cfg.Limits.DiskMB = 64 })
	id := te.create(t, sandbox.CreateRequest{}).ID
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		// 200 files of 10 MB at most, so a failure cannot fill the disk,
		// at most 50 MB/s, so the writer goes on growing for 40 s or more
		// however fast the disk (one that ended before the watch's second
		// look would leave a sandbox over its limit but no longer growing,
		// which the watch rightly leaves running).
		_, err := te.docker.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"sh", "-c",
			"sleep 1; i=0; while [ $i -lt 200 ]; do i=$((i+1)); head -c 10000000 /dev/zero > /workspace/g$i || exit; sleep 0.2; done"},
			Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
		ended <- err
	}()
	eventually(t, 90*time.Second, "the sandbox to be stopped", func() bool {
		info, err := te.Get(ctx, id)
		return err == nil && info.Status == sandbox.StatusStopped
	})
	<-ended
	// The log says why right after the stop, which Docker's event may show
	// a moment before.
	var logs []sandbox.Activity
	var said string
	testwait.Eventually(t, 10*time.Second, "the log to say why the sandbox was stopped", func() bool {
		var err error
		if logs, err = te.Logs(ctx, id, 10); err != nil {
			t.Fatal(err)
		}
		for _, a := range logs {
			if a.Tool == "disk_watchdog" {
				said = a.Stderr
			}
		}
		return said != ""
	})
	if !strings.Contains(said, "over its disk limit of 64 MB (limits.disk_mb) outside any call") || !strings.Contains(said, "the sandbox was stopped") {
		t.Errorf("the log does not say why the sandbox was stopped: %+v", logs)
	}
	out := te.command(t, id, "ls /workspace | wc -l")
	if n := strings.TrimSpace(out.Stdout); n == "0" || out.ExitCode != 0 {
		t.Errorf("after the stop, the sandbox's files are gone or it does not run: %+v", out)
	}
	if err := te.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:goruntime.Stack(buf, true)]); strings.Contains(stacks, "(*Engine).diskWatch") {
		t.Errorf("the disk watch's goroutine outlived Close:\n%s", stacks)
	}
}
