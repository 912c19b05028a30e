//go:build unix

package socket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Listener is the engine's socket listener. Its Accept only returns
// connections from peers running as the engine's own uid; others are closed
// and logged. Close removes the socket file and releases the engine lock.
type Listener struct {
	ln        *net.UnixListener
	lock      *os.File
	path      string
	uid       int
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
}

// Listen binds the engine's socket at the absolute path. It creates the
// directory with mode 0700 (an existing one must already be 0700 and owned by
// us), takes the per-socket lock so only one engine serves it, removes a dead
// socket left by a crashed engine, refuses when a live one answers
// (ErrAlreadyRunning), and leaves the socket at mode 0600.
func Listen(path string, opts ...Option) (*Listener, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("socket path %q is not absolute", path)
	}
	if len(path) > maxPathLen {
		return nil, fmt.Errorf("socket path %s is %d bytes, longer than the %d a unix socket allows",
			path, len(path), maxPathLen)
	}
	l := &Listener{path: path, uid: os.Getuid(), log: slog.Default()}
	for _, opt := range opts {
		opt(l)
	}
	if err := ensurePrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	lock, err := acquireLock(path + ".lock")
	if err != nil {
		return nil, err
	}
	if err := removeStale(path); err != nil {
		lock.Close()
		return nil, err
	}
	ln, err := bindPrivate(path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	l.ln, l.lock = ln, lock
	return l, nil
}

// removeStale deletes a socket nobody answers on. Anything that is not a
// socket is left alone: it is not ours to delete.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; move it away and start again", path)
	}
	conn, err := net.DialTimeout("unix", path, staleDialTimeout)
	if err == nil {
		conn.Close()
		return fmt.Errorf("%w: something answers on %s; quit it first", ErrAlreadyRunning, path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("socket %s: cannot tell whether it is in use: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	return nil
}

// bindPrivate binds the socket and sets its mode to 0600.
//
// It binds first and chmods after, instead of tightening the umask around
// bind: the umask is per process, and while it is 0177 every file other
// goroutines of the engine create (state, logs) would silently get the wrong
// mode. The window between bind and chmod is closed by the directory instead:
// Listen has verified it is ours with mode 0700, so no other uid can reach the
// socket, whatever its own mode, before the chmod makes it 0600 too.
func bindPrivate(path string) (*net.UnixListener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, socketMode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	return ln, nil
}

// Accept waits for the next connection from a peer of the engine's uid.
// Connections from any other uid, or whose credentials cannot be read, are
// closed, logged and skipped. It returns an error only when the listener
// fails or is closed.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		l.logRefusal(uid, err)
		c.Close()
	}
}

// logRefusal records a refused connection with the peer's uid or the reason
// its credentials could not be read.
func (l *Listener) logRefusal(uid int, err error) {
	if err != nil {
		l.log.Warn("socket: refused connection: cannot read peer credentials",
			"socket", l.path, "err", err)
		return
	}
	l.log.Warn("socket: refused connection from another user",
		"socket", l.path, "peer_uid", uid, "engine_uid", l.uid)
}

// Close stops listening, removes the socket file and releases the lock.
// It is safe to call more than once.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.ln.Close()
		if err := l.lock.Close(); l.closeErr == nil {
			l.closeErr = err
		}
	})
	return l.closeErr
}

// Addr returns the socket's address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Path returns the socket's file path.
func (l *Listener) Path() string { return l.path }

// Dial connects to the engine's socket at path. The result is a
// *net.UnixConn, so callers can half-close it with CloseWrite.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}

// withFD runs fn with the connection's file descriptor.
func withFD(c *net.UnixConn, fn func(fd int) error) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var fnErr error
	if err := raw.Control(func(fd uintptr) { fnErr = fn(int(fd)) }); err != nil {
		return err
	}
	return fnErr
}
