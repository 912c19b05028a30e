package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
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
// three go through an exec of the agent's own stat and tar
// (runtime.AgentPath, on its read-only volume: never a program of the
// sandbox's), run as the container's user: they read and write what that
// user could, no more. Every read of their output is bounded.

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

// execStat is StatPath through an exec of the agent's stat, which prints
// the path's stat as JSON (agent/wire.Stat) or exits 3 when it is missing.
func (c *Client) execStat(ctx context.Context, id, p string) (runtime.PathStat, error) {
	op := fmt.Sprintf("stat %s in container %s", p, id)
	out, errOut := runtime.NewCapped(64<<10), runtime.NewCapped(4<<10)
	code, err := c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{runtime.AgentPath, "stat", p}, Stdout: out, Stderr: errOut})
	switch {
	case err != nil:
		return runtime.PathStat{}, err
	case code == 3:
		return runtime.PathStat{}, fmt.Errorf("%s: %w (%s)", op, sandbox.ErrNotFound, strings.TrimSpace(errOut.String()))
	case code != 0:
		return runtime.PathStat{}, fmt.Errorf("%s: exit %d (%s)", op, code, strings.TrimSpace(errOut.String()))
	}
	var st struct {
		Name    string `json:"name"`
		Size    int64  `json:"size"`
		Mode    uint32 `json:"mode"`
		ModTime int64  `json:"mtime"`
		Link    string `json:"link"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		return runtime.PathStat{}, fmt.Errorf("%s: unexpected stat output: %w", op, err)
	}
	return runtime.PathStat{Name: path.Base(p), Size: st.Size, Mode: st.Mode, ModTime: time.Unix(st.ModTime, 0), LinkTarget: st.Link}, nil
}

// execCopyTo is CopyTo through an exec of the agent's tar, extracting as the container's
// user (so what it writes is that user's, whatever the headers say).
func (c *Client) execCopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error {
	op := fmt.Sprintf("copy into %s in container %s", dstDir, id)
	errOut := runtime.NewCapped(4 << 10)
	code, err := c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{runtime.AgentPath, "tarin", dstDir}, Stdin: tarStream, Stderr: errOut})
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

// execCopyFrom is CopyFrom through an exec of the agent's tar. The archive
// streams as the agent writes it (the caller bounds what it reads); closing
// the reader ends the exec and waits for it.
func (c *Client) execCopyFrom(ctx context.Context, id, p string) (io.ReadCloser, runtime.PathStat, error) {
	st, err := c.execStat(ctx, id, p)
	if err != nil {
		return nil, runtime.PathStat{}, err
	}
	return runtime.Stream(ctx, func(ctx context.Context, stdout io.Writer) error {
		errOut := runtime.NewCapped(4 << 10)
		code, err := c.Exec(ctx, id, runtime.ExecOptions{
			Cmd:    []string{runtime.AgentPath, "tarout", path.Clean(p)},
			Stdout: stdout, Stderr: errOut,
		})
		if err == nil && code != 0 {
			err = fmt.Errorf("copy %s from container %s: tar exit %d (%s)", p, id, code, strings.TrimSpace(errOut.String()))
		}
		return err
	}), st, nil
}
