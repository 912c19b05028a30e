package loopback

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
)

// OwnUser wraps ln, a TCP listener, so that Accept returns only connections
// whose other end is a socket of this process's own user. A connection from
// another user's socket on this machine, or from a loopback address whose
// socket cannot be found (closed already, or the table unreadable), is
// closed at once and logged; what names the port in the log. Connections
// from other machines pass (the socket is not here), and so does everything
// where PeerUID is ErrNotChecked. The MCP socket's peer-uid check does the
// same for its unix socket.
func OwnUser(ln net.Listener, log *slog.Logger, what string) net.Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ownUser{Listener: ln, uid: os.Getuid(), log: log, what: what, peerUID: PeerUID, warned: make(map[int]bool)}
}

type ownUser struct {
	net.Listener
	uid     int
	log     *slog.Logger
	what    string
	peerUID func(net.Conn) (int, error)

	mu     sync.Mutex
	warned map[int]bool // peers (uid, or -1 for errors) already logged at Warn; guarded by mu
}

// Accept waits for the next connection of this user's. It returns an error
// only when the listener fails or is closed.
func (l *ownUser) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.admit(c) {
			return c, nil
		}
		c.Close()
	}
}

func (l *ownUser) admit(c net.Conn) bool {
	uid, err := l.peerUID(c)
	switch {
	case err == nil && uid == l.uid:
		return true
	case errors.Is(err, ErrNotChecked):
		return true
	case errors.Is(err, ErrNoPeer) && !fromLoopback(c):
		return true // another machine (an HTTPS endpoint on every interface)
	}
	l.refused(c, uid, err)
	return false
}

// refused logs a refusal: the first of each peer user at Warn, the rest at
// Debug, so another user's flood of connections cannot flood the log.
func (l *ownUser) refused(c net.Conn, uid int, err error) {
	key := uid
	if err != nil {
		key = -1
	}
	l.mu.Lock()
	first := !l.warned[key]
	l.warned[key] = true
	l.mu.Unlock()
	level := slog.LevelDebug
	if first {
		level = slog.LevelWarn
	}
	if err != nil {
		l.log.Log(context.Background(), level, l.what+": refused a connection whose user cannot be found",
			"peer", c.RemoteAddr().String(), "err", err)
		return
	}
	l.log.Log(context.Background(), level, l.what+": refused a connection from another user",
		"peer", c.RemoteAddr().String(), "peer_uid", uid, "uid", l.uid)
}

// fromLoopback reports whether c's other end has a loopback address.
func fromLoopback(c net.Conn) bool {
	a, ok := c.RemoteAddr().(*net.TCPAddr)
	return !ok || a.IP.IsLoopback() // not TCP: nothing says it is remote
}
