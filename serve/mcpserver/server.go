// Package mcpserver serves Sandtray's engine over the Model Context Protocol.
// It is the assembly of two packages, and what the host imports:
//
//   - package transport carries the messages: newline-delimited JSON-RPC on
//     any byte stream (ServeConn for a socket or pipe connection, ServeStdio
//     for a process's stdin and stdout, one MCP session each), and Streamable
//     HTTP and SSE behind a bearer-token guard (NewHTTP), with the sessions
//     and the budgets of requests in flight;
//   - package tools is the catalog: every MCP tool, in sets that each ask the
//     engine for a small interface, and the resources sandtray://sandboxes
//     and sandtray://sandbox/{id}/logs.
//
// New registers every tool set with one Backend, the union of the sets'
// interfaces, which *engine.Engine provides. The host calls
// SandboxesChanged when sandboxes come and go, so clients hear of it.
package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"slices"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/serve/mcpserver/tools"
	"github.com/sandtray/sandtray/serve/mcpserver/transport"
)

// Backend is what the whole server needs from the engine: the session
// hooks and every tool set's interface. *engine.Engine satisfies it, and
// tests use an in-memory fake. Each tool set asks only for its own part
// (tools.Sandboxes, tools.Executor, tools.Files, ...), so a tool reaches no
// more of the engine than it uses.
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
	// Sessions hears when each MCP session starts and ends.
	transport.Sessions

	tools.Sandboxes
	tools.Lifecycle
	tools.Executor
	tools.Files
	tools.Transfer
	tools.Installer
	tools.Capture
	tools.Snapshots
	tools.Ports
	tools.Network
	tools.Secrets
	tools.Resources
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
		Instructions:    tools.Instructions,
		MaxRequestBytes: opts.MaxRequestBytes,
		Logger:          log,
		Sessions:        b,
		ChangesURI:      tools.SandboxesURI,
		Oversize:        tools.OversizeRequest,
	})
	k := &tools.Kit{
		MaxRequestBytes: opts.MaxRequestBytes,
		Languages:       opts.Languages, LanguageAliases: opts.LanguageAliases,
		Owner: t.Owner, TaskRun: t.TaskRun,
		Log: log,
	}
	// mcp-go lists tools by name, whatever order they are added in.
	for _, set := range [][]server.ServerTool{
		tools.SandboxTools(k, b), tools.LifecycleTools(k, b),
		tools.ExecTools(k, b), tools.JobTools(k, b), tools.LogTools(k, b),
		tools.FileTools(k, b), tools.TransferTools(k, b),
		tools.InstallTools(k, b), tools.CaptureTools(k, b), tools.SnapshotTools(k, b),
		tools.PortTools(k, b), tools.NetworkTools(k, b), tools.SecretTools(k, b),
	} {
		t.MCP().AddTools(advertised(b, set)...) // not those the runtime cannot do (capabilities.go)
	}
	tools.AddResources(t.MCP(), b)
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
