package docker

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
)

// sshStderrKept bounds what a connection's process may say on stderr that is
// kept for the error message (ssh's "Permission denied", "command not found").
const sshStderrKept = 4 << 10

// cmdConn is a net.Conn over a process's stdin and stdout: ssh running
// `docker system dial-stdio` on the remote host. CloseWrite closes stdin, so
// a half-closed exec stream (stdin done, output still coming) works as on a
// socket. Close ends the process.
type cmdConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *runtime.Capped
	peer   string
	exited chan struct{} // closed when the process has been waited for
	// waitErr is the process's exit status, set before exited is closed.
	waitErr   error
	closeOnce sync.Once
}

// startCmdConn starts cmd with its stdio as the connection. One goroutine
// per connection waits for the process; it exits when the process does,
// which Close forces.
func startCmdConn(cmd *exec.Cmd, peer string) (*cmdConn, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &cmdConn{cmd: cmd, stdin: stdin, stdout: stdout, stderr: runtime.NewCapped(sshStderrKept),
		peer: peer, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Read reads the daemon's bytes. When the process ends with an error before
// saying anything more, the error carries what it printed on stderr.
func (c *cmdConn) Read(b []byte) (int, error) {
	n, err := c.stdout.Read(b)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, fs.ErrClosed) {
		select {
		case <-c.exited:
			if c.waitErr != nil {
				return n, c.failure()
			}
		case <-time.After(time.Second): // stdout closed, process lingering: a plain EOF
		}
		return n, io.EOF
	}
	return n, err
}

// failure describes the process's exit with its stderr.
func (c *cmdConn) failure() error {
	msg := strings.TrimSpace(c.stderr.String())
	if msg == "" {
		return fmt.Errorf("%s: %w", strings.Join(c.cmd.Args, " "), c.waitErr)
	}
	return fmt.Errorf("%s: %w: %s", strings.Join(c.cmd.Args, " "), c.waitErr, msg)
}

func (c *cmdConn) Write(b []byte) (int, error) {
	n, err := c.stdin.Write(b)
	if err != nil {
		select {
		case <-c.exited:
			if c.waitErr != nil {
				return n, c.failure()
			}
		default:
		}
	}
	return n, err
}

// CloseWrite closes the process's stdin: the daemon sees the end of input.
func (c *cmdConn) CloseWrite() error { return c.stdin.Close() }

// Close closes both pipes and ends the process; it is safe to call more
// than once and returns once the process has been waited for.
func (c *cmdConn) Close() error {
	c.closeOnce.Do(func() {
		c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(100 * time.Millisecond):
			// dial-stdio exits when its stdin closes; ssh may not at once.
			_ = c.cmd.Process.Kill()
		}
		<-c.exited
	})
	return nil
}

func (c *cmdConn) LocalAddr() net.Addr  { return cmdAddr("sandtray") }
func (c *cmdConn) RemoteAddr() net.Addr { return cmdAddr(c.peer) }

// Deadlines are not supported on a pipe to a process: the HTTP transport
// does not need them, and callers bound their work with contexts.
func (c *cmdConn) SetDeadline(time.Time) error      { return nil }
func (c *cmdConn) SetReadDeadline(time.Time) error  { return nil }
func (c *cmdConn) SetWriteDeadline(time.Time) error { return nil }

// cmdAddr names a connection's end for logs.
type cmdAddr string

func (a cmdAddr) Network() string { return "ssh" }
func (a cmdAddr) String() string  { return string(a) }
