package transport

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// sessionRegistry follows MCP sessions through mcp-go's hooks and tells
// Sessions when each starts and ends. A session starts once its client is
// known: after initialize or, for a client using the stateless protocol
// (2026-07-28) that never sends initialize, at its first tool call. Only a
// started session is ended, so Sessions always sees the pair in order.
type sessionRegistry struct {
	backend Sessions
	log     *slog.Logger
	tasks   *taskRuns // stopped when their session ends

	mu       sync.Mutex
	sessions map[string]*sessionState
}

// sessionState is one live session. mu is held across the Sessions calls so
// that SessionEnded cannot overtake SessionStarted.
type sessionState struct {
	id      string
	remote  bool // an HTTP session, whose notifications mcp-go delivers
	mu      sync.Mutex
	client  string // clientInfo "name version"
	started bool
	ended   bool
}

func newSessionRegistry(b Sessions, log *slog.Logger, tasks *taskRuns) *sessionRegistry {
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

// end ends a session: its tasks stop, and Sessions hears of it if it
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
