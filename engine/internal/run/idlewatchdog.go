package run

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// WatchEvery is the longest period of the disk watchdog between calls; a
// shorter engine tick (tests) makes it shorter.
const WatchEvery = time.Second

// watchMeasureTimeout bounds one measurement between calls (Docker's size
// computation, where the engine cannot walk the layer, takes seconds).
const watchMeasureTimeout = 30 * time.Second

// Watched is one running sandbox as the watchdog between calls sees it.
type Watched struct {
	Target sandbox.Handle
	Disk   *Disk
	// Init says what its PID 1 is, before the watch kills around it; nil:
	// Docker's init, with its main process (Init{Ours: true, Main: MainOldest}).
	Init func(ctx context.Context) (Init, error)
	// Inherited is what its image carries over its base image (a fork's),
	// counted with its layer against the limit.
	Inherited int64
}

// Watchdog is the disk watchdog between calls: every period it asks an
// IdleWatch about each running sandbox, which reads the sandbox's CPU time
// from the host's cgroup files (or, for a sandbox whose file it cannot
// read, from Docker's stats: StatsCPU) and measures its layer only when it
// used CPU while no call ran. A sandbox whose files grew past the limit
// outside any call has its writers killed, and is stopped if it goes on
// growing.
type Watchdog struct {
	// CgroupRoot is where the host's cgroup hierarchy is mounted ("" for
	// /sys/fs/cgroup).
	CgroupRoot string
	// Stats reads a sandbox's CPU time where the cgroup files cannot be
	// read; nil: the watch does nothing for such a sandbox.
	Stats Stats

	runner  *Runner
	limit   int64
	running func() []Watched
	report  func(t sandbox.Handle, note string)
}

// Watchdog returns the watchdog between calls for sandboxes limited to
// limit bytes: running lists the sandboxes to look at each period, and
// report is told, in a sentence, what was done to one of them and why (the
// engine logs it, records it in the sandbox's log, and shows a notice).
func (r *Runner) Watchdog(limit int64, running func() []Watched, report func(t sandbox.Handle, note string)) *Watchdog {
	return &Watchdog{runner: r, limit: limit, running: running, report: report}
}

// Run watches every min(tick, WatchEvery). With a limit of 0 it does
// nothing. It does not return until ctx is done.
func (w *Watchdog) Run(ctx context.Context, tick time.Duration) {
	if w.limit <= 0 {
		return
	}
	period := min(tick, WatchEvery)
	cgroups := NewCgroups(w.CgroupRoot)
	var cpu CPUUsage = cgroups
	var stats *StatsCPU
	if w.Stats != nil {
		stats = NewStatsCPU(w.Stats, w.runner.log)
		defer stats.Wait()
		cpu = fallbackCPU{first: cgroups, then: stats}
	}
	iw := NewIdleWatch(cpu, w.runner)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids := w.once(ctx, iw, cgroups)
		if stats != nil {
			stats.Forget(func(id string) bool { return ids[id] })
			stats.Read(ctx, period)
		}
	}
}

// once is one period of Run; it returns the ids of the sandboxes it
// looked at.
func (w *Watchdog) once(ctx context.Context, iw *IdleWatch, cgroups *Cgroups) map[string]bool {
	running := w.running()
	ids := make(map[string]bool, len(running))
	for _, s := range running {
		ids[s.Target.ID()] = true
		if ctx.Err() != nil {
			return ids
		}
		mctx, cancel := context.WithTimeout(ctx, watchMeasureTimeout)
		v, err := iw.Check(mctx, s.Target, s.Disk, w.limit-s.Inherited)
		v.Used, v.Limit = v.Used+s.Inherited, v.Limit+s.Inherited // what the sandbox holds, against limits.disk_mb
		if err != nil && ctx.Err() == nil {
			w.runner.log.Warn("measure sandbox disk use between calls", "sandbox", s.Target.Name(), "err", err)
		}
		if v.Act != Nothing {
			w.act(mctx, iw, s, v)
			s.Disk.Acted()
		}
		cancel()
	}
	cgroups.Forget(func(id string) bool { return ids[id] })
	return ids
}

// act acts on a verdict: it kills the processes that may be writing (the
// first time), or stops the sandbox (when it went on growing after that, or
// when its PID 1, which the kill would spare, is not known to be an init of
// Sandtray's: see Init), and says why in the engine's log and to report.
func (w *Watchdog) act(ctx context.Context, iw *IdleWatch, s Watched, v Verdict) {
	t, r := s.Target, w.runner
	grew := fmt.Sprintf("the sandbox's files grew to %d MB, over its disk limit of %d MB (limits.disk_mb) outside any call",
		v.Used>>20, v.Limit>>20)
	var note string
	pid1 := Init{Ours: true, Main: MainOldest}
	if v.Act == KillWriters && s.Init != nil {
		var err error
		if pid1, err = s.Init(ctx); err != nil {
			r.log.Warn("find out what a sandbox's PID 1 is", "sandbox", t.Name(), "err", err)
		}
	}
	if !pid1.Ours {
		v.Act = StopInit
	}
	switch v.Act {
	case StopInit:
		if err := r.StopSandbox(ctx, t); err != nil {
			r.log.Warn("stop a sandbox growing outside any call", "sandbox", t.Name(), "err", err)
			return
		}
		note = fmt.Sprintf("stopped: %s; its PID 1 is not an init Sandtray started from the image (the sandbox was started again "+
			"since it was made, and its PID 1 came from its own files), which no process inside can kill, so the sandbox was stopped; "+
			"it starts again on next use, with its files; delete files to make room", grew)
	case KillWriters:
		killed, err := r.KillWriters(ctx, t, pid1)
		if err != nil {
			r.log.Warn("kill the processes writing outside any call", "sandbox", t.Name(), "err", err)
		}
		if used, err := r.Measure(ctx, t, s.Disk); err == nil {
			iw.Rebase(s.Disk, used)
		}
		if killed == 0 {
			// Nothing to kill: the growth came through the engine (a copy
			// into the sandbox) or from a process it spares (a kernel);
			// the next growth stops the sandbox.
			r.log.Info("sandbox grew past its disk limit outside any call; no process to stop", "sandbox", t.Name(),
				"used_mb", v.Used>>20, "limit_mb", v.Limit>>20)
			return
		}
		note = fmt.Sprintf("stopped: %s; its %d processes that were not part of a call were killed, "+
			"the files written so far are kept; delete files to make room", grew, killed)
	case StopSandbox:
		if err := r.StopSandbox(ctx, t); err != nil {
			r.log.Warn("stop a sandbox growing outside any call", "sandbox", t.Name(), "err", err)
			return
		}
		note = fmt.Sprintf("stopped: %s, and went on growing after its other processes were killed, so the sandbox was stopped; "+
			"it starts again on next use, with its files; delete files to make room", grew)
	default:
		return
	}
	// Said first: the stop shows at once, and the log says why with it.
	r.log.Warn("disk watchdog between calls", "sandbox", t.Name(), "id", sandbox.ShortID(t.ID()), "note", note)
	w.report(t, note)
	if v.Act != KillWriters {
		// What the writers wrote between the measurement and the stop is
		// not the next call's growth: it is judged from here.
		if used, err := r.Measure(ctx, t, s.Disk); err == nil {
			iw.Rebase(s.Disk, used)
		}
	}
}
