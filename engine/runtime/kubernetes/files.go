package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Files move through the agent's stat, tarin and tarout subcommands over
// an exec: the API has no copy of its own (kubectl cp is tar over exec too).
// A container without the agent (made by another program's CreateOptions,
// such as the conformance suite's) gets the image's own sh, stat and tar.

// Commands of the image's own, for a container without the agent: $0 is
// the path. Exit 3 means it is missing, as the agent's.
const (
	shStat   = `[ -e "$0" ] || [ -L "$0" ] || exit 3; stat -c '%s %f %Y' -- "$0" && { readlink -- "$0" || true; }`
	shTarIn  = `[ -d "$0" ] || exit 3; exec tar -xf - -C "$0"`
	shTarOut = `[ -e "$0" ] || [ -L "$0" ] || exit 3; cd -- "$(dirname -- "$0")" && exec tar -cf - -- "$(basename -- "$0")"`
)

// agentIn reports whether Pod id has the agent.
func (c *Client) agentIn(ctx context.Context, id string) (bool, error) {
	p, err := c.get(ctx, id)
	if err != nil {
		return false, err
	}
	return p.Annotations[annoAgent] != "", nil
}

// fileCmd is the agent's subcommand sub on p, or the image's sh script.
func (c *Client) fileCmd(ctx context.Context, id, sub, script, p string) ([]string, error) {
	agent, err := c.agentIn(ctx, id)
	if err != nil {
		return nil, err
	}
	if agent {
		return []string{runtime.AgentPath, sub, p}, nil
	}
	return []string{"/bin/sh", "-c", script, p}, nil
}

// parseShStat reads shStat's output: size, raw mode in hex, mtime, and the
// link's target on the next line for a symlink.
func parseShStat(out string) (size int64, mode uint32, mtime int64, link string, err error) {
	lines := strings.SplitN(strings.TrimRight(out, "\n"), "\n", 2)
	var raw uint32
	if _, err = fmt.Sscanf(lines[0], "%d %x %d", &size, &raw, &mtime); err != nil {
		return
	}
	m := fs.FileMode(raw & 0o777)
	switch raw & 0o170000 {
	case 0o040000:
		m |= fs.ModeDir
	case 0o120000:
		m |= fs.ModeSymlink
		if len(lines) > 1 {
			link = lines[1]
		}
	}
	if raw&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if raw&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if raw&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return size, uint32(m), mtime, link, nil
}

// StatPath describes path p in Pod id's container.
func (c *Client) StatPath(ctx context.Context, id, p string) (runtime.PathStat, error) {
	op := fmt.Sprintf("stat %s in sandbox %s", p, id)
	cmd, err := c.fileCmd(ctx, id, "stat", shStat, path.Clean(p))
	if err != nil {
		return runtime.PathStat{}, err
	}
	out, errOut := runtime.NewCapped(outKept), runtime.NewCapped(stderrKept)
	code, err := c.exec(ctx, id, containerName, cmd, nil, out, errOut)
	switch {
	case err != nil:
		return runtime.PathStat{}, err
	case code == 3:
		return runtime.PathStat{}, fmt.Errorf("kubernetes: %s: %w (%s)", op, sandbox.ErrNotFound, strings.TrimSpace(errOut.String()))
	case code != 0:
		return runtime.PathStat{}, fmt.Errorf("kubernetes: %s: exit %d (%s)", op, code, strings.TrimSpace(errOut.String()))
	}
	var st struct {
		Size    int64  `json:"size"`
		Mode    uint32 `json:"mode"`
		ModTime int64  `json:"mtime"`
		Link    string `json:"link"`
	}
	if cmd[0] != runtime.AgentPath {
		if st.Size, st.Mode, st.ModTime, st.Link, err = parseShStat(out.String()); err != nil {
			return runtime.PathStat{}, fmt.Errorf("kubernetes: %s: unexpected stat output %q: %w", op, out.String(), err)
		}
	} else if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		return runtime.PathStat{}, fmt.Errorf("kubernetes: %s: unexpected stat output: %w", op, err)
	}
	return runtime.PathStat{Name: path.Base(p), Size: st.Size, Mode: st.Mode, ModTime: time.Unix(st.ModTime, 0), LinkTarget: st.Link}, nil
}

// CopyTo extracts tarStream into dstDir in Pod id's container, as the
// Pod's user.
func (c *Client) CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error {
	op := fmt.Sprintf("copy into %s in sandbox %s", dstDir, id)
	cmd, err := c.fileCmd(ctx, id, "tarin", shTarIn, path.Clean(dstDir))
	if err != nil {
		return err
	}
	errOut := runtime.NewCapped(stderrKept)
	code, err := c.exec(ctx, id, containerName, cmd, tarStream, io.Discard, errOut)
	switch {
	case err != nil:
		return err
	case code == 3:
		return fmt.Errorf("kubernetes: %s: %w (%s)", op, sandbox.ErrNotFound, strings.TrimSpace(errOut.String()))
	case code != 0:
		return fmt.Errorf("kubernetes: %s: %w (tar: %s)", op, sandbox.ErrInvalid, strings.TrimSpace(errOut.String()))
	}
	return nil
}

// CopyFrom is path p of Pod id's container as a tar stream, as the agent
// writes it; closing the reader ends the exec and waits for it.
func (c *Client) CopyFrom(ctx context.Context, id, p string) (io.ReadCloser, runtime.PathStat, error) {
	st, err := c.StatPath(ctx, id, p)
	if err != nil {
		return nil, runtime.PathStat{}, err
	}
	cmd, err := c.fileCmd(ctx, id, "tarout", shTarOut, path.Clean(p))
	if err != nil {
		return nil, runtime.PathStat{}, err
	}
	return runtime.Stream(ctx, func(ctx context.Context, stdout io.Writer) error {
		errOut := runtime.NewCapped(stderrKept)
		code, err := c.exec(ctx, id, containerName, cmd, nil, stdout, errOut)
		if err == nil && code != 0 {
			err = fmt.Errorf("kubernetes: copy %s from sandbox %s: tar exit %d (%s)", p, id, code, strings.TrimSpace(errOut.String()))
		}
		return err
	}), st, nil
}
