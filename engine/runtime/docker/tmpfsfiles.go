package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker's archive API (StatPath, CopyTo, CopyFrom) works on a container's
// own filesystem from outside: it cannot see what is in a tmpfs mount, and
// refuses to write to a read-only root. A strict sandbox keeps its workdir
// and /tmp on tmpfs, so for paths on one of a container's tmpfs mounts the
// three go through an exec of the image's own stat and tar instead, run as
// the container's user: they read and write what that user could, no more.
// The root is read-only there, so those binaries are the image's.

// tmpfsCache holds each container's tmpfs mount points, read once.
type tmpfsCache struct {
	mu sync.Mutex
	m  map[string][]string // container id → mount points
}

func (t *tmpfsCache) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}

// onTmpfs reports whether p lies on one of container id's tmpfs mounts.
func (c *Client) onTmpfs(ctx context.Context, id, p string) (bool, error) {
	c.tmpfs.mu.Lock()
	mounts, ok := c.tmpfs.m[id]
	c.tmpfs.mu.Unlock()
	if !ok {
		raw, err := c.InspectRaw(ctx, id)
		if err != nil {
			return false, err
		}
		var doc struct {
			HostConfig struct{ Tmpfs map[string]string }
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return false, fmt.Errorf("read the tmpfs mounts of container %s: %w", id, err)
		}
		mounts = make([]string, 0, len(doc.HostConfig.Tmpfs))
		for m := range doc.HostConfig.Tmpfs {
			mounts = append(mounts, path.Clean(m))
		}
		c.tmpfs.mu.Lock()
		if c.tmpfs.m == nil {
			c.tmpfs.m = map[string][]string{}
		}
		c.tmpfs.m[id] = mounts
		c.tmpfs.mu.Unlock()
	}
	p = path.Clean(p)
	for _, m := range mounts {
		if p == m || strings.HasPrefix(p, m+"/") {
			return true, nil
		}
	}
	return false, nil
}

// statScript prints "<raw st_mode in hex> <size> <mtime> " then, for a
// symlink, its target resolved inside the container.
const statScript = `stat -c '%f %s %Y ' -- "$0" || exit 3; if [ -L "$0" ]; then readlink -f -- "$0" || echo; fi`

// execStat is StatPath through an exec.
func (c *Client) execStat(ctx context.Context, id, p string) (runtime.PathStat, error) {
	op := fmt.Sprintf("stat %s in container %s", p, id)
	var out, errOut bytes.Buffer
	code, err := c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", statScript, p}, Stdout: &out, Stderr: &errOut})
	switch {
	case err != nil:
		return runtime.PathStat{}, err
	case code == 3 && strings.Contains(errOut.String(), "No such file"):
		return runtime.PathStat{}, fmt.Errorf("%s: %w (%s)", op, sandbox.ErrNotFound, strings.TrimSpace(errOut.String()))
	case code != 0:
		return runtime.PathStat{}, fmt.Errorf("%s: exit %d (%s)", op, code, strings.TrimSpace(errOut.String()))
	}
	fields := strings.SplitN(out.String(), " ", 4)
	if len(fields) < 4 {
		return runtime.PathStat{}, fmt.Errorf("%s: unexpected stat output %q", op, out.String())
	}
	raw, err1 := strconv.ParseUint(fields[0], 16, 32)
	size, err2 := strconv.ParseInt(fields[1], 10, 64)
	mtime, err3 := strconv.ParseInt(fields[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return runtime.PathStat{}, fmt.Errorf("%s: unexpected stat output %q: %w", op, out.String(), err)
	}
	return runtime.PathStat{
		Name: path.Base(p), Size: size, Mode: uint32(goMode(uint32(raw))),
		ModTime: time.Unix(mtime, 0), LinkTarget: strings.TrimSpace(fields[3]),
	}, nil
}

// goMode turns a raw st_mode into Go's fs.FileMode, as Docker reports it.
func goMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & 0o170000 {
	case 0o040000:
		mode |= fs.ModeDir
	case 0o120000:
		mode |= fs.ModeSymlink
	case 0o010000:
		mode |= fs.ModeNamedPipe
	case 0o140000:
		mode |= fs.ModeSocket
	case 0o020000:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case 0o060000:
		mode |= fs.ModeDevice
	}
	for bit, flag := range map[uint32]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if m&bit != 0 {
			mode |= flag
		}
	}
	return mode
}

// execCopyTo is CopyTo through an exec of tar, extracting as the container's
// user (so what it writes is that user's, whatever the headers say).
func (c *Client) execCopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error {
	op := fmt.Sprintf("copy into %s in container %s", dstDir, id)
	var errOut bytes.Buffer
	script := `[ -d "$0" ] || { echo "$0: No such directory" >&2; exit 3; }; exec tar -x -p -f - -C "$0"`
	code, err := c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", script, dstDir}, Stdin: tarStream, Stderr: &errOut})
	switch {
	case err != nil:
		return err
	case code == 3:
		return fmt.Errorf("%s: %w (%s)", op, sandbox.ErrNotFound, strings.TrimSpace(errOut.String()))
	case code != 0:
		return fmt.Errorf("%s: %w (tar: %s)", op, sandbox.ErrInvalid, strings.TrimSpace(errOut.String()))
	}
	return nil
}

// execCopyFrom is CopyFrom through an exec of tar. The archive streams as
// tar writes it; closing the reader ends the exec and waits for it.
func (c *Client) execCopyFrom(ctx context.Context, id, p string) (io.ReadCloser, runtime.PathStat, error) {
	st, err := c.execStat(ctx, id, p)
	if err != nil {
		return nil, runtime.PathStat{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var errOut bytes.Buffer
		code, err := c.Exec(ctx, id, runtime.ExecOptions{
			Cmd:    []string{"tar", "-c", "-f", "-", "-C", path.Dir(path.Clean(p)), "--", path.Base(path.Clean(p))},
			Stdout: pw, Stderr: &errOut,
		})
		if err == nil && code != 0 {
			err = fmt.Errorf("copy %s from container %s: tar exit %d (%s)", p, id, code, strings.TrimSpace(errOut.String()))
		}
		pw.CloseWithError(err)
	}()
	return &execReader{PipeReader: pr, cancel: cancel, done: done}, st, nil
}

// execReader is the archive of execCopyFrom; Close stops the exec.
type execReader struct {
	*io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *execReader) Close() error {
	r.cancel()
	err := r.PipeReader.Close()
	<-r.done
	return err
}
