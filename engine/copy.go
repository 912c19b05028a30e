package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// CopyToSandbox copies a host file or folder (under the allowed roots) into a
// sandbox. dest "" means the workdir; an existing folder receives the source
// by its own name; any other dest is the new name. Host symlinks are copied
// as links, never followed, so nothing outside the roots is read.
func (e *Engine) CopyToSandbox(ctx context.Context, owner sandbox.Owner, ref, hostPath, dest string) (sandbox.CopyResult, error) {
	src, err := e.hostPath(hostPath, true)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	if err := hostfs.CheckTree(src, e.copyLimits()); err != nil {
		return sandbox.CopyResult{}, fmt.Errorf("copy %s: %w", src, err)
	}
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	defer done()
	dir, name := b.spec.Workdir, filepath.Base(src)
	if dest != "" {
		abs := e.fileTarget(b).Path(dest)
		if st, err := e.docker.StatPath(ctx, b.id, abs); err == nil && fs.FileMode(st.Mode).IsDir() {
			dir = abs
		} else {
			dir, name = path.Dir(abs), path.Base(abs)
		}
	}
	if err := e.files.Mkdir(ctx, e.fileTarget(b), dir); err != nil {
		return sandbox.CopyResult{}, err
	}
	uid, gid, err := e.files.Owner(ctx, e.fileTarget(b))
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	res := sandbox.CopyResult{Path: path.Join(dir, name)}
	_, err = e.docker.StatPath(ctx, b.id, res.Path)
	fresh := errors.Is(err, sandbox.ErrNotFound) // a failed copy removes what it began
	pr, pw := io.Pipe()
	tarred := make(chan error, 1)
	go func() {
		err := hostfs.TarTree(pw, src, name, uid, gid, e.copyLimits(), &res)
		pw.CloseWithError(err)
		tarred <- err
	}()
	err = e.docker.CopyTo(ctx, b.id, dir, pr)
	pr.CloseWithError(err) // unblocks the tar writer if Docker stopped reading
	if terr := <-tarred; terr != nil && !errors.Is(terr, io.ErrClosedPipe) {
		err = terr // the host side's reason (a limit crossed while copying) says more
	}
	e.record(b.id, activityFor("copy_to_sandbox", owner, src+" → "+res.Path, err, fmt.Sprintf("%d files, %d bytes", res.Files, res.Bytes)))
	if err != nil {
		if fresh {
			e.removePartial(ctx, b, res.Path)
		}
		return sandbox.CopyResult{}, fmt.Errorf("copy %s into sandbox %s: %w", src, b.name, err)
	}
	return res, nil
}

// removePartial removes what a failed or cancelled copy into a new
// destination wrote. It outlives a cancelled ctx (which is why the copy
// ended) but for a bounded time, and the call still holds the sandbox.
func (e *Engine) removePartial(ctx context.Context, b *box, p string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := e.files.Remove(ctx, e.fileTarget(b), p); err != nil {
		e.log.Warn("remove a partial copy", "sandbox", b.name, "path", p, "err", err)
	}
}

// CopyFromSandbox copies a sandbox file or folder to the host, under the
// allowed roots. An existing host folder receives it by its own name; any
// other host_path is the new name, and must not exist: nothing on the host is
// overwritten. Symlinks, devices and names that would escape are skipped and
// reported; files are created through an os.Root, which refuses to follow any
// symlink out of the destination, even one swapped in during the copy.
func (e *Engine) CopyFromSandbox(ctx context.Context, owner sandbox.Owner, ref, p, hostPath string) (sandbox.CopyResult, error) {
	dst, err := e.hostPath(hostPath, false)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	return e.copyOut(ctx, owner, ref, p, dst, e.copyLimits())
}

// copyLimits are the limits on what one copy a model asks for may move.
func (e *Engine) copyLimits() hostfs.Limits {
	return hostfs.Limits{MaxBytes: e.cfg.Limits.MaxCopyBytes, MaxFiles: e.cfg.Limits.MaxCopyFiles}
}

// exportRecords is the folder where exports record what they wrote (see
// capture.Config.ExportRecords): in the state dir, out of every sandbox's reach.
func (e *Engine) exportRecords() string {
	if e.cfg.StateDir == "" {
		return ""
	}
	return filepath.Join(e.cfg.StateDir, "exports")
}

// SaveFiles copies a sandbox file or folder to a host path a person picked
// in the GUI's save dialog: the allowed roots bind what models ask for, not
// what the user chooses. Every other rule of CopyFromSandbox holds.
func (e *Engine) SaveFiles(ctx context.Context, ref, p, hostPath string) (sandbox.CopyResult, error) {
	if !filepath.IsAbs(hostPath) {
		return sandbox.CopyResult{}, fmt.Errorf("host path %q must be absolute: %w", hostPath, sandbox.ErrInvalid)
	}
	return e.copyOut(ctx, sandbox.Owner{Client: "Sandtray app"}, ref, p, filepath.Clean(hostPath), hostfs.Limits{})
}

func (e *Engine) copyOut(ctx context.Context, owner sandbox.Owner, ref, p, dst string, lim hostfs.Limits) (sandbox.CopyResult, error) {
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	defer done()
	src := e.fileTarget(b).Path(p)
	if st, err := os.Stat(dst); err == nil && st.IsDir() {
		dst = filepath.Join(dst, path.Base(src))
	}
	if _, err := os.Lstat(dst); err == nil {
		return sandbox.CopyResult{}, fmt.Errorf("host path %s already exists and Sandtray never overwrites host files; pick a new name: %w", dst, sandbox.ErrConflict)
	}
	rc, st, err := e.docker.CopyFrom(ctx, b.id, src)
	if errors.Is(err, sandbox.ErrNotFound) {
		return sandbox.CopyResult{}, fmt.Errorf("no %s in sandbox %s: %w", src, b.name, sandbox.ErrNotFound)
	}
	if err != nil {
		return sandbox.CopyResult{}, e.gone(b, fmt.Errorf("copy %s: %w", src, err))
	}
	defer rc.Close()
	if fs.FileMode(st.Mode).IsRegular() {
		if err := lim.CheckBytes(st.Size); err != nil { // before a byte of it is read
			return sandbox.CopyResult{}, fmt.Errorf("copy %s: %w", src, err)
		}
	}
	res, err := hostfs.Extract(rc, dst, lim)
	e.record(b.id, activityFor("copy_from_sandbox", owner, src+" → "+dst, err, fmt.Sprintf("%d files, %d bytes", res.Files, res.Bytes)))
	return res, err
}
