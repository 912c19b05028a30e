package docker

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// exitPollInterval is how often Exec re-inspects an exec whose output has
// ended but whose exit code Docker has not recorded yet.
const exitPollInterval = 10 * time.Millisecond

// Exec runs o.Cmd in a running container and returns its exit code. It does
// not return until the process's output streams end or ctx is done.
//
// Stdout and stderr are demultiplexed into o.Stdout and o.Stderr (nil
// discards). When o.Stdin is set, it is copied to the process and then
// half-closed, so the process sees EOF; Exec waits for that copy, so o.Stdin
// must be a reader that does not block forever (a bytes.Reader, a file).
// Exit codes 126 and 127 (not executable, not found) are results, not errors.
// A container that is not running fails with sandbox.ErrConflict.
//
// Docker always gets "/" as the exec's working directory; o.Workdir is
// entered by a shell inside the container (see enterWorkdir), and an exec
// with no o.Workdir runs in "/", not in the container's workdir.
//
// When ctx is done, Exec closes the connection at once and returns an error
// wrapping ctx.Err(); Docker does not kill the process then, so the caller
// must (for example by killing its process group, or the container).
func (c *Client) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	op := "exec in container " + id
	created, err := c.api.ExecCreate(ctx, id, client.ExecCreateOptions{
		User:         o.User,
		AttachStdin:  o.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          o.Env,
		WorkingDir:   "/",
		Cmd:          inWorkdir(o.Workdir, o.Cmd),
	})
	if err != nil {
		return -1, execError(ctx, op, err)
	}
	att, err := c.api.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return -1, execError(ctx, op, err)
	}
	if err := stream(ctx, &att.HijackedResponse, o); err != nil {
		return -1, execError(ctx, op, err)
	}
	code, err := c.exitCode(ctx, created.ID)
	if err != nil {
		return -1, execError(ctx, op, err)
	}
	return code, nil
}

// stream pumps stdin into the hijacked connection and its demultiplexed
// output into o's writers until the output ends or ctx is done. It closes the
// connection and waits for the stdin copier before it returns, so no
// goroutine outlives it: the copier ends at EOF of o.Stdin or at its first
// write to the closed connection. A Stdin with a StreamEnded method is told
// when the output has ended, so one that waits for input to write (a
// kernel's) can end its copy without writing.
func stream(ctx context.Context, conn *client.HijackedResponse, o runtime.ExecOptions) error {
	stopOnCancel := context.AfterFunc(ctx, conn.Close)
	defer stopOnCancel()

	copied := make(chan struct{})
	if o.Stdin != nil {
		go func() {
			defer close(copied)
			// A write error means the process ended or ctx closed the
			// connection, and then the half-close fails harmlessly too.
			_, _ = io.Copy(conn.Conn, o.Stdin)
			_ = conn.CloseWrite()
		}()
	} else {
		close(copied)
	}

	_, err := stdcopy.StdCopy(orDiscard(o.Stdout), orDiscard(o.Stderr), conn.Reader)
	conn.Close()
	if s, ok := o.Stdin.(interface{ StreamEnded() }); ok {
		s.StreamEnded() // a stdin idle between writes (a kernel's) ends its copy now
	}
	<-copied
	return err
}

// exitCode reads the exec's exit code. The output can end a moment before
// Docker records the exit, so it polls while the exec still shows as running.
func (c *Client) exitCode(ctx context.Context, execID string) (int, error) {
	for {
		res, err := c.api.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil {
			return -1, err
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(exitPollInterval):
		}
	}
}

// execError reports a failed exec. Once ctx is done, whatever broke is a
// consequence of that, so the error wraps ctx.Err() rather than a Docker
// kind: the engine tells a timeout from a Docker failure with errors.Is.
func execError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", op, ctxErr)
	}
	return wrap(op, err)
}

// enterWorkdir is the shell that puts an exec in its workdir: Docker is
// always given "/" as the working directory, so a workdir that code in the
// sandbox swapped for a symlink (to /proc/self/fd/N: runc's CVE-2024-21626)
// never reaches runc. A workdir that cannot be entered is said on stderr and
// the command runs in "/", so a sandbox whose workdir is broken still runs.
const enterWorkdir = `cd -- "$0" 2>/dev/null || { echo "sandtray: cannot enter the workdir $0 (not a folder any more?); running in /" >&2; cd /; }; exec "$@"`

// inWorkdir is cmd run from workdir through enterWorkdir; with no workdir
// (or "/") the exec runs in "/" as it is.
func inWorkdir(workdir string, cmd []string) []string {
	if workdir == "" || workdir == "/" {
		return cmd
	}
	return append([]string{"/bin/sh", "-c", enterWorkdir, workdir}, cmd...)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
