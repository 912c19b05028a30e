package transport

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
)

// newSessionID returns a session id nobody can guess. Ids outlive the
// process in the engine's state, so they must not repeat after a restart.
func newSessionID() string { return rand.Text() }

// sessionIDs is mcp-go's SessionIdManager for Streamable HTTP: it knows which
// ids it handed out and are still live, so an unknown or ended id gets 404
// (the client then starts a new session) instead of a session of its own.
type sessionIDs struct {
	mu   sync.Mutex
	live map[string]bool // guarded by mu
}

var errUnknownSession = errors.New("unknown session")

func newSessionIDs() *sessionIDs { return &sessionIDs{live: make(map[string]bool)} }

func (s *sessionIDs) Generate() string {
	id := newSessionID()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[id] = true
	return id
}

func (s *sessionIDs) Validate(id string) (terminated bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live[id] {
		return false, errUnknownSession
	}
	return false, nil
}

func (s *sessionIDs) Terminate(id string) (notAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	return false, nil
}

// clear forgets every id, so that no session outlives a token rotation.
func (s *sessionIDs) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.live)
}

// statelessSessions gives HTTP clients of the stateless protocol
// (2026-07-28), whose requests belong to no MCP session, a Sandtray session
// each: one per client name for the life of the HTTP endpoint (or until the
// token rotates). Their sandbox and job ids are the handles they pass back;
// the session gives execute calls without sandbox_id a default sandbox, and
// the GUI an owner to show.
type statelessSessions struct {
	reg *sessionRegistry

	mu       sync.Mutex
	byClient map[string]string // client name → session id; guarded by mu
}

func newStatelessSessions(reg *sessionRegistry) *statelessSessions {
	return &statelessSessions{reg: reg, byClient: make(map[string]string)}
}

// sessionFor returns the session of a stateless client, registering it on
// first use.
func (s *statelessSessions) sessionFor(client string) *sessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byClient[client]
	if !ok {
		id = newSessionID()
		s.byClient[client] = id
	}
	return s.reg.ensure(id)
}

// endAll ends every stateless client's session.
func (s *statelessSessions) endAll() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.byClient))
	for _, id := range s.byClient {
		ids = append(ids, id)
	}
	clear(s.byClient)
	s.mu.Unlock()
	for _, id := range ids {
		s.reg.end(id)
	}
}

type statelessKey struct{}

func withStateless(ctx context.Context, s *statelessSessions) context.Context {
	return context.WithValue(ctx, statelessKey{}, s)
}

// statelessFrom returns the stateless sessions of the endpoint that
// received the request, or nil when it came another way.
func statelessFrom(ctx context.Context) *statelessSessions {
	s, _ := ctx.Value(statelessKey{}).(*statelessSessions)
	return s
}
