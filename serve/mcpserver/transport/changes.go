package transport

import "sync"

// ResourcesChanged tells every connected client that the resources changed:
// each live session gets notifications/resources/list_changed and, if it
// subscribed to Options.ChangesURI, notifications/resources/updated. It
// never blocks: each connection's writer sends at most one pending
// notification for any number of calls made before it got to it.
func (s *Server) ResourcesChanged() {
	s.live.each(func(c *connSession) { c.markChanged() })
	select {
	case s.remoteChanged <- struct{}{}: // for HTTP sessions; see announceChanges
	default:
	}
}

// Subscribed counts the connections' sessions subscribed to uri.
func (s *Server) Subscribed(uri string) int {
	n := 0
	s.live.each(func(c *connSession) {
		if c.IsSubscribedToResource(uri) {
			n++
		}
	})
	return n
}

// liveSessions is the set of sessions being served, for ResourcesChanged.
type liveSessions struct {
	mu       sync.Mutex
	sessions map[*connSession]struct{}
}

func (l *liveSessions) add(c *connSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sessions == nil {
		l.sessions = make(map[*connSession]struct{})
	}
	l.sessions[c] = struct{}{}
}

func (l *liveSessions) remove(c *connSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sessions, c)
}

func (l *liveSessions) each(fn func(*connSession)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.sessions {
		fn(c)
	}
}
