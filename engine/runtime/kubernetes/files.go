package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Files move through the agent's stat, tarin and tarout subcommands over
// an exec: the API has no copy of its own (kubectl cp is tar over exec too).

// StatPath describes path p in Pod id's container.
func (c *Client) StatPath(ctx context.Context, id, p string) (runtime.PathStat, error) {
	op := fmt.Sprintf("stat %s in sandbox %s", p, id)
	var out, errOut bytes.Buffer
	code, err := c.exec(ctx, id, containerName, []string{runtime.AgentPath, "stat", path.Clean(p)}, nil, &out, &errOut)
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
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		return runtime.PathStat{}, fmt.Errorf("kubernetes: %s: unexpected stat output: %w", op, err)
	}
	return runtime.PathStat{Name: path.Base(p), Size: st.Size, Mode: st.Mode, ModTime: time.Unix(st.ModTime, 0), LinkTarget: st.Link}, nil
}

// CopyTo extracts tarStream into dstDir in Pod id's container, as the
// Pod's user.
func (c *Client) CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error {
	op := fmt.Sprintf("copy into %s in sandbox %s", dstDir, id)
	var errOut bytes.Buffer
	code, err := c.exec(ctx, id, containerName, []string{runtime.AgentPath, "tarin", path.Clean(dstDir)}, tarStream, io.Discard, &errOut)
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
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var errOut bytes.Buffer
		code, err := c.exec(ctx, id, containerName, []string{runtime.AgentPath, "tarout", path.Clean(p)}, nil, pw, &errOut)
		if err == nil && code != 0 {
			err = fmt.Errorf("kubernetes: copy %s from sandbox %s: tar exit %d (%s)", p, id, code, strings.TrimSpace(errOut.String()))
		}
		pw.CloseWithError(err)
	}()
	return &execReader{PipeReader: pr, cancel: cancel, done: done}, st, nil
}

// execReader is CopyFrom's archive; Close stops the exec.
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
