// Package transport carries MCP messages between clients and an mcp-go
// server, and knows nothing of what the tools do: newline-delimited
// JSON-RPC on any byte stream (stdio, the unix socket or a pipe), Streamable
// HTTP and the legacy HTTP+SSE transport behind a bearer-token guard, MCP
// sessions and their start and end, per-connection and per-client budgets
// of requests and bytes in flight, cancellation, and the runs of MCP tasks.
//
// The assembly (package mcpserver) creates a Server, registers its tools
// and resources on Server.MCP, and gives them Server.Owner and
// Server.TaskRun.
package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Sessions hears when MCP sessions start and end; the engine keeps each
// session's default sandbox and ephemeral sandboxes by it.
type Sessions interface {
	// SessionStarted is called once per MCP session, as soon as the client is
	// known: after initialize, or at the first tool call of a client that
	// skips the handshake.
	SessionStarted(owner sandbox.Owner)
	// SessionEnded is called when a started session's connection closes, after
	// its last tool call has returned.
	SessionEnded(session string)
}

// DefaultMaxRequestBytes is the default cap on one request: a JSON-RPC
// message, and the arguments of one tool call.
const DefaultMaxRequestBytes = 16 << 20

// Options configures a Server. Zero values take the defaults.
type Options struct {
	// Name and Version are reported to clients as the server's.
	Name, Version string
	// Instructions are the server's instructions to clients.
	Instructions string
	// MaxRequestBytes caps one request; 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Sessions hears of sessions starting and ending.
	Sessions Sessions
	// ChangesURI is the one resource clients may subscribe to; ResourcesChanged
	// announces its updates.
	ChangesURI string
	// Oversize is the message a request over MaxRequestBytes gets, given its
	// size and the limit; nil says only the sizes.
	Oversize func(size, limit int64) string
}

// Server serves one mcp-go server on any number of connections, one MCP
// session each, and over HTTP.
type Server struct {
	mcp      *server.MCPServer
	opts     Options
	log      *slog.Logger
	sessions *sessionRegistry
	live     liveSessions
	tasks    *taskRuns
	// remoteChanged holds one pending "resources changed" for the HTTP
	// endpoint's sessions, which have no writer of their own.
	remoteChanged chan struct{}
}

// New returns a Server with no tools; register them on MCP.
func New(opts Options) *Server {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Oversize == nil {
		opts.Oversize = func(size, limit int64) string {
			return fmt.Sprintf("This request is %d bytes, over the limit of %d bytes per request.", size, limit)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tasks := newTaskRuns()
	s := &Server{opts: opts, log: log, sessions: newSessionRegistry(opts.Sessions, log, tasks), tasks: tasks,
		remoteChanged: make(chan struct{}, 1)}

	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(s.sessions.registered)
	hooks.AddOnUnregisterSession(s.sessions.unregistered)
	hooks.AddAfterInitialize(s.sessions.initialized)
	s.mcp = server.NewMCPServer(opts.Name, opts.Version,
		server.WithToolCapabilities(false),
		// Subscriptions and list changes are served for ChangesURI only; see
		// ResourcesChanged.
		server.WithResourceCapabilities(true, true),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithInstructions(opts.Instructions),
		// Tools may run as tasks; see tasks.go.
		server.WithTaskCapabilities(true, true, true),
		server.WithTaskHooks(tasks.hooks()),
	)
	return s
}

// MCP is the mcp-go server the tools and resources are registered on.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Owner identifies the session of a tool call, starting the session first
// if its client skipped initialize.
func (s *Server) Owner(ctx context.Context) sandbox.Owner { return s.sessions.owner(ctx) }

// TaskRun returns the context for the run of the MCP task a tool call
// created, detached from its request's and ended by tasks/cancel or the end
// of session, and the function to call when the run is over. ok is false
// when the call created no task.
func (s *Server) TaskRun(ctx context.Context, session string) (run context.Context, done func(), ok bool) {
	id := taskIDOf(ctx)
	if id == "" {
		return ctx, func() {}, false
	}
	run, done = s.tasks.start(ctx, id, session)
	return run, done, true
}

// oversizeReply answers a message too long to read.
func (s *Server) oversizeReply(e *oversizeError) json.RawMessage {
	return oversizeReply(e, s.opts.Oversize(e.size, int64(s.opts.MaxRequestBytes)))
}

// ServeStdio serves one MCP session on in and out, such as a process's stdin
// and stdout. It does not return until ctx is done or in reaches EOF. If in
// is an io.Closer it is closed when ctx is done, so that a blocked read ends,
// and when ServeStdio returns; out is never closed.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.ServeConn(ctx, stdio{Reader: in, Writer: out})
}

// stdio joins a reader and a writer into the connection ServeConn expects.
type stdio struct {
	io.Reader
	io.Writer
}

func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
