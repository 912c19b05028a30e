package run

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// How often a running call's sandbox is measured against limits.disk_mb:
// by walking its writable layer when the engine can read Docker's files
// (a local daemon, the engine as root), or else by Docker's own size
// computation, which takes seconds on fuse-overlayfs. The first measurement
// comes one period after a call starts, so short calls cost nothing.
const (
	diskPollLocal  = 500 * time.Millisecond
	diskPollDocker = 3 * time.Second
)

// diskSlack is how far over limits.disk_mb a layer may measure before the
// watchdog stops a call: the layer's own folders and bookkeeping take a few
// blocks beside the files, and without a margin one file written up to its
// RLIMIT_FSIZE cap (exactly the limit) would both fail its write and stop
// the call, depending on which came first.
const diskSlack = 1 << 20

// Disk is what the watchdog keeps about one sandbox between calls: its
// writable layer's folder on this host when the engine can read it (known
// once looked up), its size when last measured, the calls running in it,
// and the state of the watch between calls (IdleWatch).
type Disk struct {
	mu       sync.Mutex
	upperDir string // guarded by mu
	known    bool   // guarded by mu
	seen     int64  // guarded by mu
	calls    int    // guarded by mu: calls running (CallStarted, CallEnded)
	epoch    uint64 // guarded by mu: counts every call's start and end
	idle     idleState
	// acting is closed while the watch between calls acts on a verdict
	// (kills writers, stops the sandbox): CallStarted waits for it, so the
	// kill never meets a call's exec being started. nil when not acting;
	// guarded by mu.
	acting chan struct{}
}

// CallStarted records that a call (an exec, a kernel run, a job, an
// install) starts in the sandbox: the watch between calls (IdleWatch)
// leaves it alone until every call ended. While the watch acts on the
// sandbox (see IdleWatch.Check), it first waits for that to end: a kill
// that took the call's exec as it started would fail the call. Pair it
// with CallEnded.
func (d *Disk) CallStarted() {
	d.mu.Lock()
	for d.acting != nil {
		acting := d.acting
		d.mu.Unlock()
		<-acting
		d.mu.Lock()
	}
	d.calls++
	d.epoch++
	d.mu.Unlock()
}

// Acted ends what a verdict to act began (see IdleWatch.Check): calls
// waiting in CallStarted go on.
func (d *Disk) Acted() {
	d.mu.Lock()
	if d.acting != nil {
		close(d.acting)
		d.acting = nil
	}
	d.mu.Unlock()
}

// CallEnded records that a call started with CallStarted ended.
func (d *Disk) CallEnded() {
	d.mu.Lock()
	d.calls--
	d.epoch++
	d.mu.Unlock()
}

// WatchDisk measures t's writable layer until ctx ends, and stops the call
// with cancel and a Stopped cause when it is over limit and grew by more
// than diskSlack since the last measurement: a call that only reads in a
// sandbox already over the limit runs on, and so does one that deletes,
// even when its process writes a few blocks of its own first. Docker 20.10 cannot set a
// quota on fuse-overlayfs, nor on overlay2 outside xfs with project quotas,
// so the engine enforces it. It does not return until ctx is done or it
// stopped the call.
func (r *Runner) WatchDisk(ctx context.Context, t sandbox.Handle, d *Disk, limit int64, cancel context.CancelCauseFunc) {
	timer := time.NewTimer(diskPollLocal)
	defer timer.Stop()
	var measure func(context.Context) (int64, error)
	every := diskPollLocal
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if measure == nil { // chosen at the first tick: most calls end before it
			measure, every = r.diskMeter(ctx, t, d)
		}
		used, err := measure(ctx)
		if err != nil {
			switch {
			case errors.Is(err, sandbox.ErrUnsupported):
				// A runtime that cannot tell (Kubernetes: its kubelet
				// bounds the Pod's storage instead), every call alike.
				r.log.Debug("measure sandbox disk use", "sandbox", t.Name(), "err", err)
			case ctx.Err() == nil:
				r.log.Warn("measure sandbox disk use", "sandbox", t.Name(), "err", err)
			}
			return
		}
		d.mu.Lock()
		seen := d.seen
		d.seen = used
		d.mu.Unlock()
		if used > limit+diskSlack && used > seen+diskSlack {
			cancel(&Stopped{Code: -1, Outcome: sandbox.Outcome{End: sandbox.DiskFull, DiskMB: used >> 20, DiskLimitMB: limit >> 20}})
			return
		}
		timer.Reset(every)
	}
}

// diskMeter picks how to measure t: a walk of its writable layer when the
// engine can read it, else Docker's size computation.
func (r *Runner) diskMeter(ctx context.Context, t sandbox.Handle, d *Disk) (func(context.Context) (int64, error), time.Duration) {
	d.mu.Lock()
	upper, known := d.upperDir, d.known
	d.mu.Unlock()
	if !known {
		if info, err := r.docker.Disk(ctx, t.ID()); err == nil {
			if _, err := os.Stat(info.UpperDir); info.UpperDir != "" && err == nil {
				upper = info.UpperDir
			}
			d.mu.Lock()
			d.upperDir, d.known = upper, true
			d.mu.Unlock()
		}
	}
	if upper != "" {
		return func(ctx context.Context) (int64, error) { return diskUsage(ctx, upper) }, diskPollLocal
	}
	return func(ctx context.Context) (int64, error) { return r.docker.SizeRw(ctx, t.ID()) }, diskPollDocker
}

// diskUsage sums the space the files under dir take on disk (allocated
// blocks, so a sparse file counts for what it holds).
func diskUsage(ctx context.Context, dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while we walk
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		total += allocated(info)
		return nil
	})
	return total, err
}
