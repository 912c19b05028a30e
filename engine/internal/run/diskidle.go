package run

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The watch between calls measures a sandbox's layer only when its
// processes used CPU while no call ran: writing costs CPU, and an idle
// sandbox uses almost none (its init, docker-init, wakes once a second for
// about 25 µs). So with every sandbox idle it reads one small cgroup file
// per sandbox per period (or, where it cannot, one of Docker's one-shot
// stats per sandbox every 5 s) and walks nothing.
const (
	// idleCPUNoise is the CPU per second a sandbox may use without being
	// measured: eight times what its init uses.
	idleCPUNoise = 200 * time.Microsecond
	// idleCPUTrigger is the CPU above the noise, added up since the last
	// measurement, that makes the next one: writing 10 MB takes more.
	idleCPUTrigger = 2 * time.Millisecond
	// idleMeasureShare keeps the walks' own cost in bounds: after a
	// measurement that took d, the next waits at least idleMeasureShare*d,
	// so a layer of a million files, measured while something spins in
	// the sandbox, costs the engine at most a fifth of a core.
	idleMeasureShare = 4
)

// CPUReading is a sandbox's CPU time, as read at one moment.
type CPUReading struct {
	Used time.Duration // the CPU time its processes used since it started
	// At is when it was read, on the clock of whoever read it (this host's
	// for the cgroup files, the daemon's for Docker's stats): the watch
	// judges the CPU used between two readings against the time between
	// them, and skips a reading it has already seen (the same At).
	At time.Time
}

// CPUUsage reads how much CPU time a sandbox's processes have used since
// it started. The engine's reads the host's cgroup files (Cgroups), and
// Docker's stats where it cannot (StatsCPU).
type CPUUsage interface {
	// CPU is the latest reading of the sandbox id's CPU time, false when
	// there is none: cgroups this process may not read, a stopped
	// sandbox, no answer from Docker yet. A source that reads less often
	// than it is asked returns the same reading again until a newer one.
	CPU(id string) (CPUReading, bool)
}

// Meter measures a sandbox's writable layer, in bytes on disk. The
// Runner's walks the layer's folder when it can read it, else asks Docker.
type Meter interface {
	Measure(ctx context.Context, t sandbox.Handle, d *Disk) (int64, error)
}

// Action is what the watch between calls asks the engine to do.
type Action int

const (
	// Nothing: the sandbox is idle, within its limit, or not growing.
	Nothing Action = iota
	// KillWriters: the layer grew past the limit while no call ran; kill
	// the processes that can be writing (KillWriters), keep the files.
	KillWriters
	// StopSandbox: it went on growing after that; stop the sandbox.
	StopSandbox
	// StopInit: it grew past the limit, and its PID 1 is not an init of
	// Sandtray's (Init.Ours), which the kill cannot end; stop the sandbox.
	StopInit
)

// Verdict is the watch's answer for one sandbox at one tick.
type Verdict struct {
	Act         Action
	Used, Limit int64 // bytes: what the layer measured, and limits.disk_mb
}

// idleState is the watch's memory of one sandbox, kept in its Disk.
type idleState struct {
	epoch     uint64        // the call epoch (Disk.epoch) when last looked at
	cpu       time.Duration // the CPU time last read
	cpuKnown  bool
	at        time.Time     // when it was read (CPUReading.At)
	excess    time.Duration // CPU above the noise since the last measurement
	base      int64         // the layer's size that growth is judged against
	baseKnown bool          // base was measured since the last call
	strikes   int           // times it acted since the growth began
	next      time.Time     // no measurement before this (idleMeasureShare)
}

// IdleWatch is the disk watchdog between calls. WatchDisk watches a sandbox
// while a call runs in it; a process that hid from the end-of-call sweep
// (it left the call's process group and dropped its marker) writes on
// after it. The engine calls Check for every running sandbox once per
// period, from one goroutine.
type IdleWatch struct {
	cpu   CPUUsage
	meter Meter
	now   func() time.Time
}

// NewIdleWatch returns a watch that reads CPU time from cpu and measures
// layers with meter.
func NewIdleWatch(cpu CPUUsage, meter Meter) *IdleWatch {
	return &IdleWatch{cpu: cpu, meter: meter, now: time.Now}
}

// Check is one tick for the sandbox t: when no call runs or ran in it since
// the last tick, and its processes used CPU beyond the noise between the
// last reading and this one, it measures the layer. A reading already seen
// (a source that reads less often than the watch ticks) is skipped. It
// asks to act only when the layer grew by more than the slack since the
// last measurement outside calls, and is over limit (plus the slack): a
// sandbox that merely sits over its limit (a call filled it, and that call
// said so) is left alone. Once it acted, the next growth with no call
// between and the layer still over the limit asks to stop the sandbox,
// however long the writer paused. The first measurement after a call only sets the
// size that growth is judged against, since the call's last writes may
// land after its own watchdog measured. A verdict to act holds new calls
// out of the sandbox (they wait in CallStarted) until the caller calls
// d.Acted.
func (w *IdleWatch) Check(ctx context.Context, t sandbox.Handle, d *Disk, limit int64) (Verdict, error) {
	r, ok := w.cpu.CPU(t.ID())
	now := w.now()
	d.mu.Lock()
	s := &d.idle
	switch {
	case !ok:
		s.cpuKnown = false
		d.mu.Unlock()
		return Verdict{}, nil
	case d.calls > 0 || d.epoch != s.epoch || !s.cpuKnown || r.Used < s.cpu || r.At.Before(s.at):
		// A call runs or ran since the last tick (its own watchdog measured
		// it), or this is the first look, or the sandbox restarted, or the
		// reading came from another clock: start afresh from here.
		*s = idleState{epoch: d.epoch, cpu: r.Used, cpuKnown: true, at: r.At, next: s.next}
		d.mu.Unlock()
		return Verdict{}, nil
	case r.At.Equal(s.at):
		// Already seen: the source has not read the sandbox again since.
		d.mu.Unlock()
		return Verdict{}, nil
	}
	noise := idleCPUNoise * time.Duration(r.At.Sub(s.at).Milliseconds()) / 1000
	if grew := r.Used - s.cpu - noise; grew > 0 {
		s.excess += grew
	}
	s.cpu, s.at = r.Used, r.At
	if s.excess < idleCPUTrigger || now.Before(s.next) {
		d.mu.Unlock()
		return Verdict{}, nil
	}
	s.excess = 0
	epoch := d.epoch
	d.mu.Unlock()

	used, err := w.meter.Measure(ctx, t, d)
	took := w.now().Sub(now)
	if err != nil {
		return Verdict{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.calls > 0 || d.epoch != epoch {
		return Verdict{}, nil // a call started meanwhile: the size is its watchdog's to judge
	}
	d.seen = used // so the next call judges its own growth from here
	s.next = now.Add(idleMeasureShare * took)
	grew := s.baseKnown && used > s.base+diskSlack
	if !s.baseKnown || used < s.base || grew {
		// Growth below the slack adds up: the base stays until it passes.
		s.base, s.baseKnown = used, true
	}
	if used <= limit+diskSlack {
		s.strikes = 0 // back within its limit: the next growth past it starts afresh
		return Verdict{}, nil
	}
	if !grew {
		// Over the limit but not growing: a pause between two writes of a
		// writer the kill spared keeps its strike, since no call ran since
		// (a call starts the watch afresh) and so whatever grows the layer
		// next outlived the kill.
		return Verdict{}, nil
	}
	s.strikes++
	v := Verdict{Act: KillWriters, Used: used, Limit: limit}
	if s.strikes > 1 {
		v.Act = StopSandbox
	}
	d.acting = make(chan struct{}) // under the same lock as the check that no call runs
	return v, nil
}

// Rebase sets the size that growth is judged against after the engine
// acted on a verdict: what the killed writers wrote between the
// measurement and their end is not growth after it.
func (w *IdleWatch) Rebase(d *Disk, used int64) {
	d.mu.Lock()
	d.idle.base, d.idle.baseKnown = used, true
	d.seen = used
	d.mu.Unlock()
}

// Measure measures t's writable layer once: a walk of its folder when the
// engine can read it, else Docker's size computation.
func (r *Runner) Measure(ctx context.Context, t sandbox.Handle, d *Disk) (int64, error) {
	measure, _ := r.diskMeter(ctx, t, d)
	return measure(ctx)
}
