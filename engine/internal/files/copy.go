package files

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

	"github.com/sandtray/sandtray/agent/wire"
	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// CheckSource checks src, a host file or folder a model asked to copy into
// a sandbox, against the copy limits before any of it is read.
func (f *Files) CheckSource(src string) error {
	if err := hostfs.CheckTree(src, f.cfg.Limits); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}

// CopyIn copies src, a host file or folder, into t. dest "" means the
// workdir; an existing folder receives the source by its own name; any other
// dest is the new name. Host symlinks are copied as links, never followed.
// log hears of the copy once it began; one into a new destination that
// fails removes what it wrote.
func (f *Files) CopyIn(ctx context.Context, t sandbox.Handle, src, dest string, log Log) (sandbox.CopyResult, error) {
	s, err := f.session(ctx, t)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	dir, name := t.Workdir(), filepath.Base(src)
	if dest != "" {
		abs := Path(t, dest)
		if st, err := s.Stat(ctx, abs); err == nil && isDir(ctx, s, abs, st) {
			dir = abs
		} else {
			dir, name = path.Dir(abs), path.Base(abs)
		}
	}
	if err := f.Mkdir(ctx, t, dir); err != nil {
		return sandbox.CopyResult{}, err
	}
	res := sandbox.CopyResult{Path: path.Join(dir, name)}
	_, err = s.Stat(ctx, res.Path)
	fresh := errors.Is(err, sandbox.ErrNotFound) // a failed copy removes what it began
	pr, pw := io.Pipe()
	tarred := make(chan error, 1)
	go func() {
		// The agent writes as the sandbox's user: what it extracts is that
		// user's, whatever the headers say.
		err := hostfs.TarTree(pw, src, name, 0, 0, f.cfg.Limits, &res)
		pw.CloseWithError(err)
		tarred <- err
	}()
	err = s.TarIn(ctx, dir, pr, 0, 0)
	pr.CloseWithError(err) // unblocks the tar writer if the agent stopped reading
	if terr := <-tarred; terr != nil && !errors.Is(terr, io.ErrClosedPipe) {
		err = terr // the host side's reason (a limit crossed while copying) says more
	}
	log(src+" → "+res.Path, err, fmt.Sprintf("%d files, %d bytes", res.Files, res.Bytes))
	if err != nil {
		if fresh {
			f.removePartial(ctx, t, res.Path)
		}
		return sandbox.CopyResult{}, fmt.Errorf("copy %s into sandbox %s: %w", src, t.Name(), err)
	}
	return res, nil
}

// removePartial removes what a failed or cancelled copy into a new
// destination wrote. It outlives a cancelled ctx (which is why the copy
// ended) but for a bounded time, and the call still holds the sandbox.
func (f *Files) removePartial(ctx context.Context, t sandbox.Handle, p string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := f.Remove(ctx, t, p); err != nil && f.cfg.Log != nil {
		f.cfg.Log.Warn("remove a partial copy", "sandbox", t.Name(), "path", p, "err", err)
	}
}

// CopyOut copies p, a file or folder in t, to dst on the host, within the
// copy limits. An existing host folder receives it by its own name; any
// other dst is the new name, and must not exist: nothing on the host is
// overwritten. Symlinks, devices and names that would escape are skipped and
// reported (see hostfs.Extract). log hears of the copy once it began.
func (f *Files) CopyOut(ctx context.Context, t sandbox.Handle, p, dst string, log Log) (sandbox.CopyResult, error) {
	return f.copyOut(ctx, t, p, dst, f.cfg.Limits, log)
}

// Save is CopyOut for a person, who picked dst in the app: no copy limit
// binds it.
func (f *Files) Save(ctx context.Context, t sandbox.Handle, p, dst string, log Log) (sandbox.CopyResult, error) {
	return f.copyOut(ctx, t, p, dst, hostfs.Limits{}, log)
}

func (f *Files) copyOut(ctx context.Context, t sandbox.Handle, p, dst string, lim hostfs.Limits, log Log) (sandbox.CopyResult, error) {
	src := Path(t, p)
	if st, err := os.Stat(dst); err == nil && st.IsDir() {
		dst = filepath.Join(dst, path.Base(src))
	}
	if _, err := os.Lstat(dst); err == nil {
		return sandbox.CopyResult{}, fmt.Errorf("host path %s already exists and Sandtray never overwrites host files; pick a new name: %w", dst, sandbox.ErrConflict)
	}
	if err := t.EnsureRunning(ctx); err != nil {
		return sandbox.CopyResult{}, err
	}
	rc, st, err := f.docker.CopyFrom(ctx, t.ID(), src)
	if errors.Is(err, sandbox.ErrNotFound) {
		return sandbox.CopyResult{}, fmt.Errorf("no %s in sandbox %s: %w", src, t.Name(), sandbox.ErrNotFound)
	}
	if err != nil {
		return sandbox.CopyResult{}, t.Gone(fmt.Errorf("copy %s: %w", src, err))
	}
	defer rc.Close()
	if fs.FileMode(st.Mode).IsRegular() {
		if err := lim.CheckBytes(st.Size); err != nil { // before a byte of it is read
			return sandbox.CopyResult{}, fmt.Errorf("copy %s: %w", src, err)
		}
	}
	res, err := hostfs.Extract(rc, dst, lim)
	log(src+" → "+dst, err, fmt.Sprintf("%d files, %d bytes", res.Files, res.Bytes))
	return res, err
}

// isDir reports whether abs, which st describes, is a folder or a symlink
// to one (inside the sandbox).
func isDir(ctx context.Context, s *agentclient.Session, abs string, st wire.Stat) bool {
	if fs.FileMode(st.Mode).IsDir() {
		return true
	}
	if fs.FileMode(st.Mode)&fs.ModeSymlink == 0 || st.Link == "" {
		return false
	}
	target, err := s.Stat(ctx, st.Link)
	return err == nil && fs.FileMode(target.Mode).IsDir()
}
