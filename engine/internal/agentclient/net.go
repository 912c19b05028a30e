package agentclient

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
)

// Conn is a connection carried by the agent: a stream of the session.
// CloseWrite ends the engine's side (the far end reads EOF); Close ends
// both.
type Conn struct {
	*wire.Stream
	release func()
}

// CloseWrite half-closes the connection: the sandbox's side reads its end.
func (c *Conn) CloseWrite() error { return c.Stream.Close() }

// Close ends the connection.
func (c *Conn) Close() error {
	if c.release != nil {
		c.release()
	}
	_ = c.Stream.SetDeadline(time.Now())
	return c.Stream.Close()
}

// Dial connects to port on the sandbox's own loopback (IPv4, then IPv6).
// It fails with ErrRefused when nothing there accepts.
func (s *Session) Dial(ctx context.Context, port int) (*Conn, error) {
	st, release, err := s.open(ctx, wire.Request{Op: wire.OpDial, Port: port})
	if err != nil {
		return nil, err
	}
	var r wire.Reply
	if err := s.reply(ctx, st, wire.MaxReply, &r); err != nil {
		release()
		st.Close()
		return nil, err
	}
	release() // the connection outlives the dial's context
	return &Conn{Stream: st}, nil
}

// Listen has the agent listen on the sandbox's loopback port: each
// connection it accepts is handed to h (in a goroutine of its own), at
// most wire.MaxStreams at once per sandbox. It listens until stop.
func (s *Session) Listen(ctx context.Context, port int, tag string, h func(net.Conn)) (stop func(), err error) {
	s.mu.Lock()
	if _, ok := s.handlers[tag]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("a listener named %q already runs in the sandbox", tag)
	}
	s.handlers[tag] = h
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.handlers, tag)
		s.mu.Unlock()
	}
	st, release, err := s.open(ctx, wire.Request{Op: wire.OpListen, Port: port, Tag: tag})
	if err != nil {
		forget()
		return nil, err
	}
	var r wire.Reply
	err = s.reply(ctx, st, wire.MaxReply, &r)
	release()
	if err != nil {
		st.Close()
		forget()
		return nil, err
	}
	return func() {
		forget()
		_ = st.SetDeadline(time.Now())
		st.Close()
	}, nil
}

// acceptLoop takes the streams the agent opens (a listener's connections)
// until the session ends; past wire.MaxStreams being handled at once, a new
// one is closed at once.
func (s *Session) acceptLoop() {
	for {
		st, err := s.sess.AcceptStream()
		if err != nil {
			return
		}
		select {
		case s.incoming <- struct{}{}:
			go s.serveIncoming(st)
		default:
			st.Close()
		}
	}
}

// connHeaderTimeout bounds how long an incoming stream may take to say
// what it is.
const connHeaderTimeout = 5 * time.Second

func (s *Session) serveIncoming(st *wire.Stream) {
	defer func() { <-s.incoming }()
	_ = st.SetReadDeadline(time.Now().Add(connHeaderTimeout))
	var req wire.Request
	if err := wire.ReadJSON(st, wire.KindRequest, 4<<10, &req); err != nil || req.Op != wire.OpConn {
		st.Close()
		return
	}
	_ = st.SetReadDeadline(time.Time{})
	s.mu.Lock()
	h := s.handlers[req.Tag]
	s.mu.Unlock()
	if h == nil {
		st.Close()
		return
	}
	h(&Conn{Stream: st})
}

var (
	_ net.Conn  = (*Conn)(nil)
	_ io.Closer = (*Conn)(nil)
)
