// Package mcpserver serves Sandtray's engine over the Model Context Protocol.
//
// It is the only package that imports github.com/mark3labs/mcp-go. Each MCP
// tool has one constructor returning its schema and handler; the handlers
// validate arguments, call the engine through the consumer-defined Backend
// interface, and answer with structured content plus a readable text part.
// Bad input and refused actions are tool errors a model can act on; failures
// of Docker or the host are Go errors, which reach the client as JSON-RPC
// errors.
//
// Two resources show the same data to clients that read rather than call:
// sandtray://sandboxes and sandtray://sandbox/{id}/logs. The host calls
// SandboxesChanged when sandboxes come and go, so clients hear of it.
//
// A Server speaks newline-delimited JSON-RPC on any byte stream: ServeConn
// serves one connection as one MCP session (the unix socket gives each client
// its own), and ServeStdio serves a process's stdin and stdout the same way.
package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"slices"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/mcpserver/transport"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Backend is what the whole server needs from the engine: the session
// hooks and every tool set's interface. *engine.Engine satisfies it, and
// tests use an in-memory fake. Each tool set asks only for its own part
// (Sandboxes, Executor, Files, ...), so a tool reaches no more of the engine
// than it uses.
//
// A ref is a sandbox id, a unique id prefix, or a sandbox name. The owner
// identifies the calling MCP session: Session is the MCP session id and
// Client the clientInfo "name version" the client announced.
//
// Errors are classified with the kinds in engine/sandbox: the server turns an
// error for which sandbox.IsUserError is true into a tool error carrying
// err.Error(), which must therefore be a sentence a model can act on, and any
// other error into a JSON-RPC error.
type Backend interface {
	// SessionStarted is called once per MCP session, as soon as the client is
	// known: after initialize, or at the first tool call of a client that
	// skips the handshake.
	SessionStarted(owner sandbox.Owner)
	// SessionEnded is called when a started session's connection closes, after
	// its last tool call has returned.
	SessionEnded(session string)

	Sandboxes
	Lifecycle
	Executor
	Files
	Transfer
	Installer
	Capture
	Snapshots
	Ports
	Network
	Secrets
	Resources
}

// DefaultMaxRequestBytes is the default cap on one request: a JSON-RPC
// message, and the arguments of one tool call.
const DefaultMaxRequestBytes = transport.DefaultMaxRequestBytes

// defaultLanguages are the languages execute_code and create_sandbox accept
// when Options.Languages is empty.
var defaultLanguages = []string{"python", "javascript", "bash", "sh"}

// Options configures a Server. Zero values take the defaults.
type Options struct {
	// Version is reported to clients as the server's version.
	Version string
	// MaxRequestBytes caps one request; 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Languages lists the languages execute_code and create_sandbox accept;
	// nil means python, javascript, bash and sh. The Backend's default
	// language (python) should be among them.
	Languages []string
	// LanguageAliases maps other accepted spellings to a name in Languages.
	LanguageAliases map[string]string
}

// Server is Sandtray's MCP server: every tool, wired to a Backend, served
// by the transport with one MCP session per connection.
type Server struct {
	transport *transport.Server
}

const instructions = `Sandtray runs code in isolated Docker sandboxes on the user's machine.
execute_code and execute_command work without any setup: with no sandbox_id they use this session's default sandbox, created on first use.
Paths inside a sandbox are relative to /workspace unless absolute. Sandboxes have no network unless created with network "egress" (through Sandtray's egress gate: the package indexes, and hosts the user approves; request_network asks) or "bridge" (when the user allows it).
Ephemeral sandboxes are removed after the session ends; persist_sandbox keeps one.
To keep an environment, install_packages records exact versions, commit_sandbox saves a sandbox as an image, and export_dockerfile writes a Dockerfile that rebuilds it.
Before something risky, snapshot_sandbox saves a sandbox's files; restore_sandbox goes back to them, and fork_sandbox makes independent copies to try approaches side by side.
` + servingHowTo

// New returns a Server whose tools call b.
func New(b Backend, opts Options) *Server {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if len(opts.Languages) == 0 {
		opts.Languages = slices.Clone(defaultLanguages)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t := transport.New(transport.Options{
		Name: "sandtray", Version: opts.Version,
		Instructions:    instructions,
		MaxRequestBytes: opts.MaxRequestBytes,
		Logger:          log,
		Sessions:        b,
		ChangesURI:      sandboxesURI,
		Oversize:        oversizeRequest,
	})
	k := &toolkit{
		maxBytes:  opts.MaxRequestBytes,
		languages: opts.Languages, languageAliases: opts.LanguageAliases,
		owner: t.Owner, taskRun: t.TaskRun,
		log: log,
	}
	for _, set := range [][]server.ServerTool{
		sandboxTools(k, b), lifecycleTools(k, b),
		execTools(k, b), jobTools(k, b), logTools(k, b),
		fileTools(k, b), transferTools(k, b),
		installTools(k, b), captureTools(k, b), snapshotTools(k, b),
		portTools(k, b), networkTools(k, b), secretTools(k, b),
	} {
		t.MCP().AddTools(set...)
	}
	addResources(t.MCP(), b)
	return &Server{transport: t}
}

// ServeConn serves conn as one MCP session speaking newline-delimited
// JSON-RPC (MCP's stdio framing); see transport.Server.ServeConn.
func (s *Server) ServeConn(ctx context.Context, conn io.ReadWriteCloser) error {
	return s.transport.ServeConn(ctx, conn)
}

// ServeStdio serves one MCP session on in and out, such as a process's stdin
// and stdout. It does not return until ctx is done or in reaches EOF. If in
// is an io.Closer it is closed when ctx is done, so that a blocked read ends,
// and when ServeStdio returns; out is never closed.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.transport.ServeStdio(ctx, in, out)
}

// SandboxesChanged tells every connected client that the set of sandboxes
// changed: each live session gets notifications/resources/list_changed and,
// if it subscribed to sandtray://sandboxes, notifications/resources/updated.
// The host calls it from the engine's snapshot watcher whenever a sandbox
// comes or goes. It never blocks.
func (s *Server) SandboxesChanged() { s.transport.ResourcesChanged() }

// NewHTTP returns the HTTP endpoint of s: Streamable HTTP at PathStreamable
// and the legacy HTTP+SSE transport at PathSSE. Serve starts it.
func (s *Server) NewHTTP(opts HTTPOptions) *HTTPServer { return s.transport.NewHTTP(opts) }

// The HTTP endpoint, from package transport.
type (
	// HTTPOptions configures the HTTP endpoint.
	HTTPOptions = transport.HTTPOptions
	// HTTPServer serves the MCP server over HTTP, behind a bearer-token guard.
	HTTPServer = transport.HTTPServer
)

// HTTP paths; see package transport.
const (
	PathStreamable = transport.PathStreamable
	PathSSE        = transport.PathSSE
	PathMessage    = transport.PathMessage
)

// Defaults of the HTTP endpoint; see package transport.
const (
	DefaultSessionIdle = transport.DefaultSessionIdle
	DefaultMaxConns    = transport.DefaultMaxConns
)
