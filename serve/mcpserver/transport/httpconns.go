package transport

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
)

// DefaultMaxConns bounds the connections the HTTP endpoint holds open at
// once (HTTPOptions.MaxConns; a constant, not a config key). Every client
// keeps a few (an HTTP/1.1 connection carries one request at a time, plus
// an SSE stream); far more than local clients need, far fewer than the file
// descriptors the engine's own socket, Docker connections and state files
// need to stay available. Connections are accepted before the token is
// checked, so without a bound any local process could take them all.
const DefaultMaxConns = 256

// limitConns wraps ln so that at most max connections it accepted are open
// at once. One more is closed as soon as it is accepted (the client sees the
// connection end, and may retry), rather than queued where it would wait
// unseen; the first refusal is logged at Warn, later ones at Debug.
func limitConns(ln net.Listener, max int, log *slog.Logger) net.Listener {
	return &connLimit{Listener: ln, slots: make(chan struct{}, max), log: log}
}

type connLimit struct {
	net.Listener
	slots  chan struct{} // one per open connection
	log    *slog.Logger
	warned atomic.Bool
}

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, free: func() { <-l.slots }}, nil
		default:
		}
		level := slog.LevelDebug
		if !l.warned.Swap(true) {
			level = slog.LevelWarn
		}
		l.log.Log(context.Background(), level, "MCP over HTTP: too many connections open; closing a new one",
			"limit", cap(l.slots), "peer", c.RemoteAddr().String())
		c.Close()
	}
}

// limitedConn gives its slot back when it is closed, once.
type limitedConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

// CloseWrite passes a half-close on, which http.Server uses to end a
// connection gracefully.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
