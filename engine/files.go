package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// WriteFile writes one file into a sandbox, creating missing parent folders.
func (e *Engine) WriteFile(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.WriteRequest) (sandbox.FileContent, error) {
	if req.Path == "" {
		return sandbox.FileContent{}, fmt.Errorf("path is empty; give a file path such as \"src/main.py\": %w", sandbox.ErrInvalid)
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	defer e.release(b)
	p := sandboxPath(b, req.Path)
	if p == "/" || isDirPath(req.Path) {
		return sandbox.FileContent{}, fmt.Errorf("path %q names a folder; give a file name: %w", req.Path, sandbox.ErrInvalid)
	}
	mode := req.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	err = e.writeFile(ctx, b, p, req.Data, mode)
	e.record(b.id, activityFor("write_file", owner, p, err, fmt.Sprintf("%d bytes", len(req.Data))))
	if err != nil {
		return sandbox.FileContent{}, err
	}
	return sandbox.FileContent{Path: p, Size: int64(len(req.Data))}, nil
}

func (e *Engine) writeFile(ctx context.Context, b *box, p string, data []byte, mode fs.FileMode) error {
	dir := path.Dir(p)
	if st, err := e.docker.StatPath(ctx, b.id, dir); errors.Is(err, sandbox.ErrNotFound) {
		if err := e.mkdirAll(ctx, b, dir); err != nil {
			return err
		}
	} else if err != nil {
		return e.gone(b, fmt.Errorf("write %s: %w", p, err))
	} else if !fs.FileMode(st.Mode).IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a folder: %w", p, dir, sandbox.ErrConflict)
	}
	uid, gid, err := e.fileOwner(ctx, b)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: path.Base(p), Mode: int64(mode), Size: int64(len(data)), ModTime: time.Now(), Typeflag: tar.TypeReg,
		Uid: uid, Gid: gid}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	tw.Write(data)
	if err := tw.Close(); err != nil {
		return err
	}
	if err := e.docker.CopyTo(ctx, b.id, dir, &buf); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// fileOwner returns the ids that own what write_file and copy_to_sandbox put
// in b. Docker extracts those archives as root and applies the owner in each
// header, so without this a sandbox whose sandbox.user is not root could not
// change its own files. A sandbox with no sandbox.user runs as its image's
// user and gets root's files, as it always has.
func (e *Engine) fileOwner(ctx context.Context, b *box) (uid, gid int, err error) {
	if b.spec.User == "" {
		return 0, 0, nil
	}
	uid, gid, err = e.docker.UserIDs(ctx, b.id, b.spec.User)
	if err != nil {
		return 0, 0, e.gone(b, fmt.Errorf("find the ids of user %q in sandbox %s: %w", b.spec.User, b.name, err))
	}
	return uid, gid, nil
}

// mkdirAll creates a folder and its parents inside the sandbox.
func (e *Engine) mkdirAll(ctx context.Context, b *box, dir string) error {
	var out bytes.Buffer
	code, err := e.docker.Exec(ctx, b.id, dockerExec([]string{"mkdir", "-p", "--", dir}, &out))
	if err != nil {
		return e.gone(b, fmt.Errorf("create folder %s: %w", dir, err))
	}
	if code != 0 {
		return fmt.Errorf("cannot create folder %s: %s: %w", dir, bytes.TrimSpace(out.Bytes()), sandbox.ErrConflict)
	}
	return nil
}

// MakeDirectory creates a folder (and its parents) inside a sandbox.
func (e *Engine) MakeDirectory(ctx context.Context, owner sandbox.Owner, ref, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("path is empty: %w", sandbox.ErrInvalid)
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return "", err
	}
	defer e.release(b)
	abs := sandboxPath(b, p)
	err = e.mkdirAll(ctx, b, abs)
	e.record(b.id, activityFor("make_directory", owner, abs, err, ""))
	return abs, err
}

// ReadFile reads up to limit bytes of a file from offset (limit <= 0 means
// the configured maximum). A symlink is followed inside the sandbox.
func (e *Engine) ReadFile(ctx context.Context, owner sandbox.Owner, ref, p string, offset, limit int64) (sandbox.FileContent, error) {
	maxRead := e.cfg.Limits.ReadFileBytes
	if offset < 0 {
		return sandbox.FileContent{}, fmt.Errorf("offset must not be negative: %w", sandbox.ErrInvalid)
	}
	if limit <= 0 || limit > maxRead {
		limit = maxRead
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	defer e.release(b)
	abs, err := e.resolveFile(ctx, b, sandboxPath(b, p))
	if err != nil {
		return sandbox.FileContent{}, err
	}
	rc, _, err := e.docker.CopyFrom(ctx, b.id, abs)
	if err != nil {
		return sandbox.FileContent{}, e.gone(b, fmt.Errorf("read %s: %w", abs, err))
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		return sandbox.FileContent{}, fmt.Errorf("read %s: %w", abs, err)
	}
	if _, err := io.CopyN(io.Discard, tr, offset); err != nil && !errors.Is(err, io.EOF) {
		return sandbox.FileContent{}, fmt.Errorf("read %s: %w", abs, err)
	}
	data, err := io.ReadAll(io.LimitReader(tr, limit))
	if err != nil {
		return sandbox.FileContent{}, fmt.Errorf("read %s: %w", abs, err)
	}
	return sandbox.FileContent{Path: abs, Data: data, Size: hdr.Size, Truncated: offset+int64(len(data)) < hdr.Size}, nil
}

// resolveFile follows symlinks (inside the sandbox) and refuses folders and
// special files with a message saying what to use instead.
func (e *Engine) resolveFile(ctx context.Context, b *box, p string) (string, error) {
	for range 16 {
		st, err := e.docker.StatPath(ctx, b.id, p)
		if errors.Is(err, sandbox.ErrNotFound) {
			return "", fmt.Errorf("no file %s in sandbox %s; list_files shows what is there: %w", p, b.name, sandbox.ErrNotFound)
		}
		if err != nil {
			return "", e.gone(b, fmt.Errorf("stat %s: %w", p, err))
		}
		mode := fs.FileMode(st.Mode)
		switch {
		case mode&fs.ModeSymlink != 0:
			target := st.LinkTarget
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(p), target)
			}
			p = target
		case mode.IsDir():
			return "", fmt.Errorf("%s is a folder; use list_files to see inside it: %w", p, sandbox.ErrInvalid)
		case !mode.IsRegular():
			return "", fmt.Errorf("%s is not a regular file (%s): %w", p, mode.Type(), sandbox.ErrInvalid)
		default:
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links: %w", p, sandbox.ErrInvalid)
}

// ready acquires a sandbox and makes sure its container runs.
func (e *Engine) ready(ctx context.Context, ref string) (*box, error) {
	b, err := e.acquire(ref)
	if err != nil {
		return nil, err
	}
	if err := e.ensureRunning(ctx, b); err != nil {
		e.release(b)
		return nil, err
	}
	return b, nil
}

func activityFor(tool string, owner sandbox.Owner, input string, err error, detail string) sandbox.Activity {
	a := sandbox.Activity{Tool: tool, Client: owner.Client, Input: input, Stdout: detail}
	if err != nil {
		a.Error = err.Error()
	}
	return a
}

func isDirPath(p string) bool { return len(p) > 0 && p[len(p)-1] == '/' }
