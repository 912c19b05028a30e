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
const DefaultMaxRequestBytes = 16 << 20

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

// Server is Sandtray's MCP server: every tool, wired to a Backend, with one
// MCP session per served connection.
type Server struct {
	mcp      *server.MCPServer
	opts     Options
	log      *slog.Logger
	sessions *sessionRegistry
	live     liveSessions
	tasks    *taskRuns
	// remoteChanged holds one pending "sandboxes changed" for the HTTP
	// endpoint's sessions, which have no writer of their own.
	remoteChanged chan struct{}
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
	tasks := newTaskRuns()
	s := &Server{opts: opts, log: log, sessions: newSessionRegistry(b, log, tasks), tasks: tasks,
		remoteChanged: make(chan struct{}, 1)}

	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(s.sessions.registered)
	hooks.AddOnUnregisterSession(s.sessions.unregistered)
	hooks.AddAfterInitialize(s.sessions.initialized)
	s.mcp = server.NewMCPServer("sandtray", opts.Version,
		server.WithToolCapabilities(false),
		// Subscriptions and list changes are served for sandtray://sandboxes
		// only; see SandboxesChanged.
		server.WithResourceCapabilities(true, true),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithInstructions(instructions),
		// execute_code, execute_command and install_packages may run as
		// tasks; see tasks.go.
		server.WithTaskCapabilities(true, true, true),
		server.WithTaskHooks(tasks.hooks()),
	)

	k := &toolkit{
		maxBytes:  opts.MaxRequestBytes,
		languages: opts.Languages, languageAliases: opts.LanguageAliases,
		owner: s.sessions.owner,
		log:   log, tasks: tasks,
	}
	for _, set := range [][]server.ServerTool{
		sandboxTools(k, b), lifecycleTools(k, b),
		execTools(k, b), jobTools(k, b), logTools(k, b),
		fileTools(k, b), transferTools(k, b),
		installTools(k, b), captureTools(k, b), snapshotTools(k, b),
		portTools(k, b), networkTools(k, b), secretTools(k, b),
	} {
		s.mcp.AddTools(set...)
	}
	addResources(s.mcp, b)
	return s
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
