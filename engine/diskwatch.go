package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// diskWatchEvery is the longest period of the disk watchdog between calls;
// a shorter engine tick (tests) makes it shorter.
const diskWatchEvery = time.Second

// diskMeasureTimeout bounds one measurement between calls (Docker's size
// computation, where the engine cannot walk the layer, takes seconds).
const diskMeasureTimeout = 30 * time.Second

// diskWatch is the disk watchdog between calls: every period it asks
// run.IdleWatch about each running sandbox, which reads the sandbox's CPU
// time from the host's cgroup files and measures its layer only when it
// used CPU while no call ran. A sandbox whose files grew past
// limits.disk_mb outside any call has its writers killed, and is stopped
// if it goes on growing. With limits.disk_mb = 0 it does nothing. It does
// not return until ctx is done.
func (e *Engine) diskWatch(ctx context.Context, tick time.Duration) {
	limit := e.cfg.Limits.DiskMB << 20
	if limit <= 0 {
		return
	}
	cgroups := run.NewCgroups("")
	w := run.NewIdleWatch(cgroups, e.runner)
	t := time.NewTicker(min(tick, diskWatchEvery))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.diskWatchOnce(ctx, w, cgroups, limit)
	}
}

// diskWatchOnce is one period of diskWatch.
func (e *Engine) diskWatchOnce(ctx context.Context, w *run.IdleWatch, cgroups *run.Cgroups, limit int64) {
	e.mu.Lock()
	running := make([]*box, 0, len(e.boxes))
	for _, b := range e.boxes {
		if b.stage == live && b.status == sandbox.StatusRunning {
			running = append(running, b)
		}
	}
	e.mu.Unlock()
	ids := make(map[string]bool, len(running))
	for _, b := range running {
		ids[b.id] = true
		if ctx.Err() != nil {
			return
		}
		mctx, cancel := context.WithTimeout(ctx, diskMeasureTimeout)
		v, err := w.Check(mctx, boxTarget{e, b}, &b.disk, limit)
		if err != nil && ctx.Err() == nil {
			e.log.Warn("measure sandbox disk use between calls", "sandbox", b.name, "err", err)
		}
		if v.Act != run.Nothing {
			e.stopDiskWriters(mctx, w, b, v)
		}
		cancel()
	}
	cgroups.Forget(func(id string) bool { return ids[id] })
}

// stopDiskWriters acts on a verdict of the watch between calls: it kills
// the processes that may be writing (the first time), or stops the sandbox
// (when it went on growing after that), and says why in the sandbox's log,
// in a desktop notice and in the engine's log.
func (e *Engine) stopDiskWriters(ctx context.Context, w *run.IdleWatch, b *box, v run.Verdict) {
	t := boxTarget{e, b}
	grew := fmt.Sprintf("the sandbox's files grew to %d MB, over its disk limit of %d MB (limits.disk_mb) outside any call",
		v.Used>>20, v.Limit>>20)
	var note string
	switch v.Act {
	case run.KillWriters:
		killed, err := e.runner.KillWriters(ctx, t)
		if err != nil {
			e.log.Warn("kill the processes writing outside any call", "sandbox", b.name, "err", err)
		}
		if used, err := e.runner.Measure(ctx, t, &b.disk); err == nil {
			w.Rebase(&b.disk, used)
		}
		if killed == 0 {
			// Nothing to kill: the growth came through the engine (a copy
			// into the sandbox) or from a process it spares (a kernel);
			// the next growth stops the sandbox.
			e.log.Info("sandbox grew past its disk limit outside any call; no process to stop", "sandbox", b.name,
				"used_mb", v.Used>>20, "limit_mb", v.Limit>>20)
			return
		}
		note = fmt.Sprintf("stopped: %s; its %d processes that were not part of a call were killed, "+
			"the files written so far are kept; delete files to make room", grew, killed)
	case run.StopSandbox:
		if err := e.runner.StopSandbox(ctx, t); err != nil {
			e.log.Warn("stop a sandbox growing outside any call", "sandbox", b.name, "err", err)
			return
		}
		note = fmt.Sprintf("stopped: %s, and went on growing after its other processes were killed, so the sandbox was stopped; "+
			"it starts again on next use, with its files; delete files to make room", grew)
	default:
		return
	}
	e.log.Warn("disk watchdog between calls", "sandbox", b.name, "id", sandbox.ShortID(b.id), "note", note)
	e.record(b.id, sandbox.Activity{Tool: "disk_watchdog", Stderr: "[sandtray: " + note + "]"})
	e.notify(b.id, "Sandbox over its disk limit", fmt.Sprintf("%s: %s.", b.name, note))
}
