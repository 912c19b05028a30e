package socket

import (
	"errors"
	"io/fs"
	"log/slog"
	"time"
)

// ErrAlreadyRunning is returned (wrapped) by Listen when another engine holds
// or answers on the socket.
var ErrAlreadyRunning = errors.New("another Sandtray is running")

// socketMode is the socket file's mode: only the owner may connect.
const socketMode fs.FileMode = 0o600

// staleDialTimeout bounds the dial that decides whether an existing socket is
// alive. A live engine answers at once; a dead socket refuses at once.
const staleDialTimeout = 2 * time.Second

// Option configures Listen.
type Option func(*Listener)

// WithLogger sets the logger that records refused connections. Without it
// Listen logs to slog.Default(), so a refusal is never silent.
func WithLogger(l *slog.Logger) Option {
	return func(ln *Listener) {
		if l != nil {
			ln.log = l
		}
	}
}

// ErrNotOwner is returned (wrapped) by DialPrivate when the process serving
// the endpoint runs as another user (on Windows, by Dial when another
// account owns the pipe).
var ErrNotOwner = errors.New("the socket is served by another user")
