package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
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

// watchDisk measures b's writable layer until ctx ends, and stops the call
// (see guarded) when it is over limit and grew since the last measurement: a
// call that only reads in a sandbox already over the limit runs on, and so
// does one that deletes. Docker 20.10 cannot set a quota on fuse-overlayfs,
// nor on overlay2 outside xfs with project quotas, so the engine enforces it.
func (e *Engine) watchDisk(ctx context.Context, b *box, limit int64, cancel context.CancelCauseFunc) {
	t := time.NewTimer(diskPollLocal)
	defer t.Stop()
	var measure func(context.Context) (int64, error)
	every := diskPollLocal
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if measure == nil { // chosen at the first tick: most calls end before it
			measure, every = e.diskMeter(ctx, b)
		}
		used, err := measure(ctx)
		if err != nil {
			if ctx.Err() == nil {
				e.log.Warn("measure sandbox disk use", "sandbox", b.name, "err", err)
			}
			return
		}
		e.mu.Lock()
		seen := b.diskSeen
		b.diskSeen = used
		e.mu.Unlock()
		if used > limit && used > seen {
			cancel(&stopped{code: -1, text: fmt.Sprintf("stopped: the sandbox's files grew to %d MB, over its disk limit of %d MB (limits.disk_mb); "+
				"delete files to make room, the ones written so far are kept", used>>20, limit>>20)})
			return
		}
		t.Reset(every)
	}
}

// diskMeter picks how to measure b: a walk of its writable layer when the
// engine can read it, else Docker's size computation.
func (e *Engine) diskMeter(ctx context.Context, b *box) (func(context.Context) (int64, error), time.Duration) {
	e.mu.Lock()
	upper, known := b.upperDir, b.upperKnown
	e.mu.Unlock()
	if !known {
		if d, err := e.docker.Disk(ctx, b.id); err == nil {
			if _, err := os.Stat(d.UpperDir); d.UpperDir != "" && err == nil {
				upper = d.UpperDir
			}
			e.mu.Lock()
			b.upperDir, b.upperKnown = upper, true
			e.mu.Unlock()
		}
	}
	if upper != "" {
		return func(ctx context.Context) (int64, error) { return diskUsage(ctx, upper) }, diskPollLocal
	}
	return func(ctx context.Context) (int64, error) { return e.docker.SizeRw(ctx, b.id) }, diskPollDocker
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
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		}
		return nil
	})
	return total, err
}
