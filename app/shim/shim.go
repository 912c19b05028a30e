// Package shim is the body of sandtray-mcp: a byte pipe between an MCP
// client's stdio and the Sandtray engine's unix socket, which starts the
// engine when nobody answers.
//
// It never parses what flows through it. Stdout carries only bytes read from
// the socket, so the client sees a clean MCP stream; everything the shim has
// to say goes to Stderr, which MCP clients keep as the server's log. When no
// engine can be reached or started at all, the shim answers each request
// itself, with a JSON-RPC error that says why (refuse.go): a client shows
// that to the model and the person, where it would hide Stderr.
package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandtray/sandtray/serve/socket"
)

// DefaultWaitTimeout is how long Run waits for a started engine's socket.
const DefaultWaitTimeout = 10 * time.Second

// maxPollDelay caps the backoff between dials while waiting for the engine.
const maxPollDelay = 500 * time.Millisecond

// endedGrace is how long Run still waits for the socket once the engine it
// started has exited: enough for the engine that made it exit (two shims
// starting one each at once: the loser exits) to answer.
const endedGrace = 2 * time.Second

// Options configures Run. Stdin and Stdout are required.
type Options struct {
	Stdin  io.Reader // the MCP client's requests
	Stdout io.Writer // receives only bytes from the engine
	Stderr io.Writer // diagnostics; nil discards them

	// SocketPath is the engine's socket; empty means socket.Path(). A relative
	// path is made absolute, though clients start the shim with cwd "/".
	SocketPath string

	// StartEngine starts the engine when nobody answers on the socket. It must
	// not wait for the engine to be ready; Run polls the socket. ended, when
	// not nil, is closed if the engine exits: Run then waits only
	// endedGrace more for an engine to answer. Nil means the built-in
	// starter: `sandtray` (or `sandtray serve` without a display), detached,
	// logging to LogPath.
	StartEngine func(ctx context.Context) (ended <-chan struct{}, err error)

	// EnginePath is the `sandtray` binary for the built-in starter; empty
	// means the one next to this executable, else the one in PATH.
	EnginePath string

	// LogPath receives the started engine's stdout and stderr; empty means
	// sandtray/engine.log in the XDG state dir.
	LogPath string

	// WaitTimeout bounds the wait for a started engine; zero means
	// DefaultWaitTimeout.
	WaitTimeout time.Duration
}

// Run connects to the engine, starting it if needed, and pipes bytes between
// Stdin/Stdout and the socket until the engine closes the connection or ctx
// is done. When Stdin ends it half-closes the socket and keeps copying the
// engine's remaining output, returning nil once the engine closes. If the
// engine closes first it returns ErrEngineClosed; a Read on Stdin that cannot
// be interrupted is then left to end on its own (see pipe).
func Run(ctx context.Context, opts Options) error {
	opts, err := withDefaults(opts)
	if err != nil {
		return err
	}
	conn, err := connect(ctx, opts)
	if err != nil {
		refuseRequests(ctx, opts, err)
		return err
	}
	return pipe(ctx, conn, opts.Stdin, opts.Stdout)
}

// withDefaults validates opts and fills in the zero values.
func withDefaults(opts Options) (Options, error) {
	if opts.Stdin == nil || opts.Stdout == nil {
		return opts, errors.New("shim: Stdin and Stdout are required")
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.WaitTimeout <= 0 {
		opts.WaitTimeout = DefaultWaitTimeout
	}
	if opts.SocketPath == "" {
		p, err := socket.Path()
		if err != nil {
			return opts, err
		}
		opts.SocketPath = p
	}
	abs, err := filepath.Abs(opts.SocketPath)
	if err != nil {
		return opts, fmt.Errorf("socket path: %w", err)
	}
	opts.SocketPath = abs
	if opts.StartEngine == nil {
		if opts.LogPath == "" {
			opts.LogPath = defaultLogPath()
		}
		opts.StartEngine = detachedStarter(opts)
	}
	return opts, nil
}

// connect dials the engine, and when nothing answers starts it and waits for
// its socket.
func connect(ctx context.Context, opts Options) (net.Conn, error) {
	conn, err := socket.DialPrivate(ctx, opts.SocketPath)
	if err == nil {
		return conn, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !engineAbsent(err) {
		return nil, fmt.Errorf("cannot connect to the Sandtray engine at %s: %w", opts.SocketPath, err)
	}
	fmt.Fprintf(opts.Stderr, "sandtray-mcp: no engine answers on %s; starting one\n", opts.SocketPath)
	ended, err := opts.StartEngine(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot start the Sandtray engine: %w. Install Sandtray so that "+
			"`sandtray` is next to sandtray-mcp or in PATH, or start it yourself with `sandtray serve`", err)
	}
	return waitForEngine(ctx, opts, ended)
}

// engineAbsent reports whether a dial error means nobody serves the socket
// (no file, or a file nobody listens on; on Windows, no pipe), as opposed to
// a problem that starting an engine would not fix, such as a permission
// error.
func engineAbsent(err error) bool { return socket.NotServing(err) }

// waitForEngine dials the socket with growing pauses until it answers or
// opts.WaitTimeout passes, or endedGrace after the started engine ended.
func waitForEngine(ctx context.Context, opts Options, ended <-chan struct{}) (net.Conn, error) {
	waitCtx, cancel := context.WithTimeout(ctx, opts.WaitTimeout)
	defer cancel()
	delay := 20 * time.Millisecond
	timer := time.NewTimer(delay)
	defer timer.Stop()
	exited := false
	for {
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, notStartedError(opts, exited)
		case <-ended:
			ended, exited = nil, true
			var stop context.CancelFunc
			waitCtx, stop = context.WithTimeout(waitCtx, endedGrace)
			defer stop()
			continue
		case <-timer.C:
		}
		if conn, err := socket.DialPrivate(waitCtx, opts.SocketPath); err == nil {
			return conn, nil
		}
		delay = min(delay*2, maxPollDelay)
		timer.Reset(delay)
	}
}

// notStartedError says what to do when a started engine never answered
// (or exited first), with the reason it gave as it ended (its log's
// "sandtray: …" line).
func notStartedError(opts Options, exited bool) error {
	where := "Run `sandtray serve` in a terminal to see why it does not start."
	if opts.LogPath != "" {
		where = fmt.Sprintf("See its log %s, or run `sandtray serve` in a terminal to see why it does not start.",
			opts.LogPath)
		if why := endedWith(opts.LogPath); why != "" {
			where = fmt.Sprintf("The engine said: %s. Its log: %s.", strings.TrimPrefix(why, "sandtray: "), opts.LogPath)
		}
	}
	if exited {
		return fmt.Errorf("the Sandtray engine exited without answering on %s. %s", opts.SocketPath, where)
	}
	return fmt.Errorf("the Sandtray engine did not answer on %s within %s. %s",
		opts.SocketPath, opts.WaitTimeout, where)
}
