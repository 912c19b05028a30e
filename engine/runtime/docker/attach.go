package docker

import (
	"context"
	"io"

	"github.com/moby/moby/client"
)

// Attach attaches to the stdin and stdout of container id, which was
// created with CreateOptions.Attached and is not started yet, as `docker
// run` attaches: nothing its main process writes is missed, and what is
// written to its stdin before the start waits there for it. Read returns
// its stdout (its stderr is set aside), Write feeds its stdin. The
// attachment lives until Close, whatever happens to ctx; when it goes, the
// container's stdin closes (StdinOnce), and its main process reads EOF.
func (c *Client) Attach(ctx context.Context, id string) (io.ReadWriteCloser, error) {
	res, err := c.api.ContainerAttach(ctx, id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, wrap("attach to container "+id, err)
	}
	return &ExecConn{client: c, conn: res.HijackedResponse}, nil
}
