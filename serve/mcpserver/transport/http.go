package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// HTTP paths. /sse and /message are the legacy HTTP+SSE transport
// (protocol 2024-11-05): a GET on /sse opens the stream and names the
// message endpoint, where the client POSTs.
const (
	PathStreamable = "/mcp"
	PathSSE        = "/sse"
	PathMessage    = "/message"
)

// DefaultSessionIdle ends an HTTP session that has sent nothing for this
// long, as a closed socket would; its ephemeral sandboxes then follow the
// session grace period.
const DefaultSessionIdle = 30 * time.Minute

// HTTPOptions configures the HTTP endpoint.
type HTTPOptions struct {
	// Token returns the bearer token every request must carry. It is called
	// for every request, so a token rotated on disk takes effect at once;
	// when it changes, every live HTTP session ends. An error refuses every
	// request (fail closed).
	Token func() (string, error)
	// Listen is the address as configured ("localhost:8765"); its host is
	// accepted in the Host header next to localhost and the bound address.
	Listen string
	// SessionIdle is how long an idle session lives; 0 means DefaultSessionIdle.
	SessionIdle time.Duration
	// TokenCheck is how often the token is re-read while no request comes,
	// so that a rotation ends idle streams too; 0 means every 2 s.
	TokenCheck time.Duration
	// TLS, when set, serves HTTPS: Serve wraps the listener in it, above
	// the connection limit.
	TLS *tls.Config
	// MaxConns bounds the connections open at once; 0 means DefaultMaxConns.
	MaxConns int
}

// HTTPServer serves the MCP server over Streamable HTTP at /mcp and the
// legacy HTTP+SSE transport at /sse, behind the guard in httpguard.go.
// Every session is a Sandtray session, as a socket connection is.
type HTTPServer struct {
	srv        *Server
	opts       HTTPOptions
	streamable *server.StreamableHTTPServer
	sse        *server.SSEServer
	ids        *sessionIDs
	stateless  *statelessSessions
	guard      *guard
}

// NewHTTP returns the HTTP endpoint of s. Serve starts it.
func (s *Server) NewHTTP(opts HTTPOptions) *HTTPServer {
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.TokenCheck <= 0 {
		opts.TokenCheck = 2 * time.Second
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	h := &HTTPServer{srv: s, opts: opts, ids: newSessionIDs(), stateless: newStatelessSessions(s.sessions)}
	h.streamable = server.NewStreamableHTTPServer(s.mcp,
		server.WithSessionIdManager(h.ids),
		server.WithSessionIdleTTL(opts.SessionIdle),
		server.WithHTTPContextFunc(h.requestContext),
		server.WithStreamableHTTPLogger(s.log),
		server.WithHeartbeatInterval(30*time.Second),
	)
	h.sse = server.NewSSEServer(s.mcp,
		server.WithSSEEndpoint(PathSSE),
		server.WithMessageEndpoint(PathMessage),
		// A relative endpoint: the client resolves it against the URL it
		// used, so it works behind whatever name the Host check allowed.
		server.WithUseFullURLForMessageEndpoint(false),
		server.WithKeepAlive(true),
		server.WithKeepAliveInterval(30*time.Second),
		server.WithSSEContextFunc(h.requestContext),
		server.WithSessionIDGenerator(func(context.Context, *http.Request) (string, error) { return newSessionID(), nil }),
	)
	return h
}

// requestContext gives each HTTP request what the socket gives each
// connection's requests: a task slot, and for stateless requests the
// Sandtray session they count against.
func (h *HTTPServer) requestContext(ctx context.Context, _ *http.Request) context.Context {
	return withStateless(withTaskSlot(ctx), h.stateless)
}

// Serve serves HTTP on ln, a TCP listener (HTTPS with HTTPOptions.TLS),
// with at most HTTPOptions.MaxConns connections open at once. It does not
// return until ctx is done or ln fails; then every HTTP session ends (their
// ephemeral sandboxes follow the grace period) and in-flight requests get a
// few seconds to finish.
func (h *HTTPServer) Serve(ctx context.Context, ln net.Listener) error {
	h.guard = newGuard(h, ln.Addr())
	ln = limitConns(ln, h.opts.MaxConns, h.srv.log)
	if h.opts.TLS != nil {
		ln = tls.NewListener(ln, h.opts.TLS)
	}
	hs := &http.Server{
		Handler:           h.guard,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// TLS handshake failures and the like: a port scan, not news.
		ErrorLog:    slog.NewLogLogger(h.srv.log.Handler(), slog.LevelDebug),
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	var loops sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(ctx)
	loops.Go(func() { h.guard.watchToken(watchCtx, h.opts.TokenCheck) })
	loops.Go(func() { h.announceChanges(watchCtx) })
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-done:
	}
	stopWatch()
	loops.Wait()
	h.endSessions(context.WithoutCancel(ctx))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = h.streamable.Shutdown(shutdownCtx)
	if serr := hs.Shutdown(shutdownCtx); serr != nil {
		hs.Close()
	}
	if err == nil {
		err = <-done
	}
	if errors.Is(err, http.ErrServerClosed) {
		return ctx.Err()
	}
	return fmt.Errorf("MCP over HTTP: %w", err)
}

// endSessions ends every HTTP session: Streamable HTTP and SSE sessions
// (their streams close and their clients must start again) and the
// stateless clients' sessions, with any task they were running.
func (h *HTTPServer) endSessions(ctx context.Context) {
	h.streamable.CloseSessions(ctx)
	h.ids.clear()
	h.sse.CloseSessions()
	h.stateless.endAll()
	h.srv.tasks.endSession("")
}

// announceChanges tells HTTP sessions that the set of sandboxes changed
// (notifications/resources/list_changed), as connWriter tells a socket's:
// any number of changes before it gets to them make one notification. It
// never blocks on a session (mcp-go drops a notification a full queue
// cannot take) and does not return until ctx is done.
func (h *HTTPServer) announceChanges(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.srv.remoteChanged:
		}
		for _, id := range h.srv.sessions.remoteIDs() {
			_ = h.srv.mcp.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationResourcesListChanged), nil)
		}
	}
}

// mux routes a request that passed the guard.
func (h *HTTPServer) mux(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case PathStreamable:
		h.streamable.ServeHTTP(w, r)
	case PathSSE, PathMessage:
		h.sse.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}
