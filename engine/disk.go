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

// diskLimitError is why a call was stopped for writing past the disk limit.
type diskLimitError struct{ usedMB, limitMB int64 }

func (d *diskLimitError) Error() string {
	return fmt.Sprintf("stopped: the sandbox's files grew to %d MB, over its disk limit of %d MB (limits.disk_mb); "+
		"delete files to make room, the ones written so far are kept", d.usedMB, d.limitMB)
}

// diskGuarded wraps a call's work so that it is stopped, with a result that
// says why, when the sandbox's writable layer grows past limits.disk_mb
// while it runs. Docker 20.10 cannot set a quota on fuse-overlayfs, nor on
// overlay2 outside xfs with project quotas, so the engine enforces it.
func (e *Engine) diskGuarded(b *box, work runFunc) runFunc {
	limit := e.cfg.Limits.DiskMB << 20
	if limit <= 0 {
		return work
	}
	return func(ctx context.Context, out *callOutput) (runOutput, error) {
		started := time.Now()
		ctx, cancel := context.WithCancelCause(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			e.watchDisk(ctx, b, limit, cancel)
		}()
		res, err := work(ctx, out)
		var over *diskLimitError
		if err != nil && errors.As(context.Cause(ctx), &over) {
			res = out.result(sandbox.ExecResult{ExitCode: -1, Duration: time.Since(started)},
				e.cfg.Limits.OutputBytes, e.cfg.Limits.LogOutputBytes)
			res.note(over.Error())
			err = nil
		}
		cancel(nil)
		<-watched
		return res, err
	}
}

// watchDisk measures b's writable layer until ctx ends, and cancels the call
// with a *diskLimitError when it is over limit and grew since the last
// measurement: a call that only reads in a sandbox already over the limit
// runs on, and so does one that deletes.
func (e *Engine) watchDisk(ctx context.Context, b *box, limit int64, cancel context.CancelCauseFunc) {
	measure, every := e.diskMeter(ctx, b)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
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
			cancel(&diskLimitError{usedMB: used >> 20, limitMB: limit >> 20})
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
