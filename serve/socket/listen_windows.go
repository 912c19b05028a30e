package socket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// Listener is the engine's named pipe. The pipe's security descriptor
// admits only the user (pipeSDDL), go-winio creates its first instance
// exclusively (so a pipe someone else made first fails Listen rather than
// being joined), refuses remote clients, and Accept checks each client
// process's user as the unix socket checks its peer's uid.
type Listener struct {
	ln        net.Listener
	path      string
	sid       *windows.SID
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
}

// pipeBuffer is each pipe instance's in and out buffer.
const pipeBuffer = 64 << 10

// Listen creates the named pipe at path (\\.\pipe\…) owned by and open to
// the current user only. A pipe that already exists means another engine
// (ErrAlreadyRunning) or a squatter of another account (an error that says
// so). Windows has no stale pipes: a pipe ends with its last handle.
func Listen(path string, opts ...Option) (*Listener, error) {
	if !isPipePath(path) {
		return nil, fmt.Errorf("on Windows the endpoint must be a named pipe (%sname), not %q; unset %s", pipePrefix, path, EnvSocket)
	}
	sid, err := currentSID()
	if err != nil {
		return nil, err
	}
	l := &Listener{path: path, sid: sid, log: slog.Default()}
	for _, opt := range opts {
		opt(l)
	}
	ln, err := winio.ListenPipe(path, &winio.PipeConfig{
		SecurityDescriptor: pipeSDDL(sid.String()),
		InputBufferSize:    pipeBuffer,
		OutputBufferSize:   pipeBuffer,
	})
	if err != nil {
		// Listen has no caller context (as on Unix, where net.DialTimeout
		// bounds the same check): the timeout alone bounds this dial.
		ctx, cancel := context.WithTimeout(context.Background(), staleDialTimeout)
		defer cancel()
		if c, dialErr := Dial(ctx, path); dialErr == nil {
			c.Close()
			return nil, fmt.Errorf("%w: something answers on %s; quit it first", ErrAlreadyRunning, path)
		} else if errors.Is(dialErr, ErrNotOwner) {
			return nil, fmt.Errorf("listen on %s: the pipe belongs to another account: %w", path, dialErr)
		}
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	l.ln = ln
	return l, nil
}

// Accept waits for the next connection from a process of the engine's
// user. Others (which the security descriptor should already have stopped)
// are closed, logged and skipped.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return nil, err
		}
		sid, err := clientSID(c)
		if err == nil && sid.Equals(l.sid) {
			return c, nil
		}
		if err != nil {
			l.log.Warn("socket: refused connection: cannot tell the client's user", "pipe", l.path, "err", err)
		} else {
			l.log.Warn("socket: refused connection from another user", "pipe", l.path, "peer_sid", sid.String(), "engine_sid", l.sid.String())
		}
		c.Close()
	}
}

// Close stops listening; the pipe disappears with its last instance.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.ln.Close() })
	return l.closeErr
}

// Addr returns the pipe's address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Path returns the pipe's path.
func (l *Listener) Path() string { return l.path }

// Dial connects to the engine's pipe and checks that the current user owns
// it (ErrNotOwner otherwise), so the shim never talks to a pipe another
// account created under the user's name. The connection supports
// CloseWrite.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	c, err := winio.DialPipeContext(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := checkServerOwner(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// DialPrivate is Dial: on Windows every Dial checks the pipe's owner, the
// counterpart of the unix check of the socket's folder and listener uid.
func DialPrivate(ctx context.Context, path string) (net.Conn, error) { return Dial(ctx, path) }

// NotServing reports whether a Dial error means no engine serves the pipe
// (it does not exist), as opposed to one starting an engine would not fix.
func NotServing(err error) bool {
	return errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND)
}
