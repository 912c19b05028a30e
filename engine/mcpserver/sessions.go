package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// sessionRegistry follows MCP sessions through mcp-go's hooks and tells the
// Backend when each starts and ends. A session starts once its client is
// known: after initialize or, for a client using the stateless protocol
// (2026-07-28) that never sends initialize, at its first tool call. Only a
// started session is ended, so the Backend always sees the pair in order.
type sessionRegistry struct {
	backend Backend
	log     *slog.Logger
	tasks   *taskRuns // stopped when their session ends

	mu       sync.Mutex
	sessions map[string]*sessionState
}

// sessionState is one live session. mu is held across the Backend calls so
// that SessionEnded cannot overtake SessionStarted.
type sessionState struct {
	id      string
	remote  bool // an HTTP session, whose notifications mcp-go delivers
	mu      sync.Mutex
	client  string // clientInfo "name version"
	started bool
	ended   bool
}

func newSessionRegistry(b Backend, log *slog.Logger, tasks *taskRuns) *sessionRegistry {
	return &sessionRegistry{backend: b, log: log, tasks: tasks, sessions: make(map[string]*sessionState)}
}

// registered is the OnRegisterSession hook.
func (r *sessionRegistry) registered(_ context.Context, session server.ClientSession) {
	id := session.SessionID()
	_, onSocket := session.(*connSession)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions[id] = &sessionState{id: id, remote: !onSocket}
	r.log.Debug("mcp session registered", "session", id)
}

// remoteIDs lists the registered HTTP sessions.
func (r *sessionRegistry) remoteIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, st := range r.sessions {
		if st.remote {
			ids = append(ids, id)
		}
	}
	return ids
}

// ensure returns the live session id, registering it if it is new: the
// sessions of stateless HTTP clients, which no transport registers.
func (r *sessionRegistry) ensure(id string) *sessionState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.sessions[id]
	if st == nil {
		st = &sessionState{id: id}
		r.sessions[id] = st
	}
	return st
}

// unregistered is the OnUnregisterSession hook.
func (r *sessionRegistry) unregistered(_ context.Context, session server.ClientSession) {
	r.end(session.SessionID())
}

// end ends a session: its tasks stop, and the Backend hears of it if it
// had started.
func (r *sessionRegistry) end(id string) {
	r.tasks.endSession(id)
	r.mu.Lock()
	st := r.sessions[id]
	delete(r.sessions, id)
	r.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ended = true
	if st.started {
		r.backend.SessionEnded(id)
		r.log.Info("mcp session ended", "session", id, "client", st.client)
	}
}

// initialized is the OnAfterInitialize hook: the handshake names the client.
func (r *sessionRegistry) initialized(ctx context.Context, _ any, req *mcp.InitializeRequest, _ *mcp.InitializeResult) {
	st := r.lookup(ctx)
	if st == nil {
		return
	}
	r.start(st, clientName(req.Params.ClientInfo))
}

// owner identifies the session of a tool call, starting the session first if
// its client skipped initialize.
func (r *sessionRegistry) owner(ctx context.Context) sandbox.Owner {
	session := server.ClientSessionFromContext(ctx)
	if session == nil {
		return sandbox.Owner{}
	}
	client := ""
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		client = clientName(*info.ClientInfo)
	} else if withInfo, ok := session.(server.SessionWithClientInfo); ok {
		client = clientName(withInfo.GetClientInfo())
	}
	st := r.lookup(ctx)
	if stateless := statelessFrom(ctx); st == nil && stateless != nil && session.SessionID() == "" {
		st = stateless.sessionFor(client)
	}
	if st == nil {
		return sandbox.Owner{Session: session.SessionID(), Client: client}
	}
	return sandbox.Owner{Session: st.id, Client: r.start(st, client)}
}

func (r *sessionRegistry) lookup(ctx context.Context) *sessionState {
	session := server.ClientSessionFromContext(ctx)
	if session == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[session.SessionID()]
}

// start records client (when the session has none yet), calls
// SessionStarted the first time, and returns the session's client.
func (r *sessionRegistry) start(st *sessionState, client string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.client == "" {
		st.client = client
	}
	if !st.started && !st.ended {
		st.started = true
		r.backend.SessionStarted(sandbox.Owner{Session: st.id, Client: st.client})
		r.log.Info("mcp session started", "session", st.id, "client", st.client)
	}
	return st.client
}

// clientName renders clientInfo as "name version".
func clientName(info mcp.Implementation) string {
	return strings.TrimSpace(info.Name + " " + info.Version)
}

// progressReporter turns sandbox.Progress calls into notifications/progress
// for the request that carried a progress token.
type progressReporter struct {
	ctx   context.Context
	srv   *server.MCPServer
	token mcp.ProgressToken

	mu     sync.Mutex
	last   float64
	sent   bool
	closed bool
}

// progressFor returns the Progress to hand the Backend for req, and a
// function to call when the request is done, after which reports are
// dropped. Without a progress token the Progress does nothing. It never
// blocks: mcp-go drops a notification when the session's queue is full.
func progressFor(ctx context.Context, req mcp.CallToolRequest) (sandbox.Progress, func()) {
	srv := server.ServerFromContext(ctx)
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil || srv == nil {
		return func(float64, float64, string) {}, func() {}
	}
	p := &progressReporter{ctx: ctx, srv: srv, token: req.Params.Meta.ProgressToken}
	return p.report, p.close
}

// report sends one notification. MCP requires progress to increase, so a
// report that does not advance is dropped.
func (p *progressReporter) report(current, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || (p.sent && current <= p.last) {
		return
	}
	params := map[string]any{"progressToken": p.token, "progress": current}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	if err := p.srv.SendNotificationToClient(p.ctx, string(mcp.MethodNotificationProgress), params); err != nil {
		return // queue full or session gone: progress is best effort
	}
	p.last, p.sent = current, true
}

func (p *progressReporter) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}
