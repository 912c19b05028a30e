package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/registry"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// diskWatch runs the disk watchdog between calls (run.Watchdog) over the
// running sandboxes, with limits.disk_mb: it reads their CPU time from the
// host's cgroup files (under Options.CgroupRoot), else from Docker's
// stats, and measures those that used some. What it does to one is recorded
// in the sandbox's log and shown in a desktop notice. It does not return
// until ctx is done.
func (e *Engine) diskWatch(ctx context.Context, tick time.Duration) {
	running := func() []run.Watched {
		var out []run.Watched
		e.reg.Locked(func() {
			out = make([]run.Watched, 0, len(e.reg.BoxesLocked()))
			for _, b := range e.reg.BoxesLocked() {
				if b.Stage == registry.Live && b.Status == sandbox.StatusRunning {
					out = append(out, run.Watched{Target: boxTarget{e, b}, Disk: &b.Disk, Inherited: b.State.Inherited,
						Init: func(ctx context.Context) (run.Init, error) { return e.initOf(ctx, b) }})
				}
			}
		})
		return out
	}
	report := func(t sandbox.Handle, note string) {
		e.record(t.ID(), sandbox.Activity{Tool: "disk_watchdog", Stderr: "[sandtray: " + note + "]"})
		e.notify(t.ID(), "Sandbox over its disk limit", fmt.Sprintf("%s: %s.", t.Name(), note))
	}
	w := e.runner.Watchdog(e.cfg().Limits.DiskMB<<20, running, report)
	w.CgroupRoot, w.Stats = e.cgroupRoot, e.docker
	w.Run(ctx, tick)
}
