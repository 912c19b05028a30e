package docker

import (
	"context"
	"io"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/client"
)

// Attachment is a created container's main process with its stdin, stdout
// and stderr attached before it starts, as `docker run` attaches: nothing it
// writes is missed, and what is written to its stdin before the start waits
// there for it. Stream pumps it; Close drops it unused.
type Attachment struct {
	id   string
	conn client.HijackedResponse
}

// Attach attaches to the stdin, stdout and stderr of container id, which was
// created with CreateOptions.Attached and is not started yet. The
// attachment lives until Stream returns or Close, whatever happens to ctx;
// when it goes, the container's stdin closes (StdinOnce), and its main
// process reads EOF.
func (c *Client) Attach(ctx context.Context, id string) (runtime.Attachment, error) {
	res, err := c.api.ContainerAttach(ctx, id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, wrap("attach to container "+id, err)
	}
	return &Attachment{id: id, conn: res.HijackedResponse}, nil
}

// Stream copies stdin to the main process and its demultiplexed stdout and
// stderr to stdout and stderr (nil discards) until its output ends or ctx is
// done, as Exec does (see stream: a stdin with a StreamEnded method is told
// when the output has ended). It closes the attachment before it returns.
// Once ctx is done it returns an error wrapping ctx.Err(); the process is not
// killed then, only its stdin closed.
func (a *Attachment) Stream(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := stream(ctx, &a.conn, runtime.ExecOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr}); err != nil {
		return execError(ctx, "attached to container "+a.id, err)
	}
	return ctx.Err()
}

// Close drops the attachment: the container's stdin closes.
func (a *Attachment) Close() { a.conn.Close() }
