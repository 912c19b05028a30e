//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
)

// dialTimeout bounds a dial to the sandbox's own loopback.
const dialTimeout = 5 * time.Second

// dial connects to the sandbox's loopback port (IPv4, then IPv6), answers,
// then carries bytes both ways (a forwarded port's connection).
func (s *server) dial(st *wire.Stream, req wire.Request) {
	if req.Port < 1 || req.Port > 65535 {
		replyErr(st, wire.KindInvalid, fmt.Errorf("port %d is not a TCP port", req.Port))
		return
	}
	var c net.Conn
	var err error
	for _, host := range []string{"127.0.0.1", "::1"} {
		if c, err = net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(req.Port)), dialTimeout); err == nil {
			break
		}
	}
	if err != nil {
		replyErr(st, wire.KindRefused, fmt.Errorf("nothing accepts connections on port %d in the sandbox", req.Port))
		return
	}
	if err := wire.WriteJSON(st, wire.KindReply, wire.Reply{}); err != nil {
		c.Close()
		return
	}
	splice(st, c.(*net.TCPConn))
}

// listen listens on the sandbox's loopback port and, for each connection,
// opens a stream towards the engine (a conn request naming req.Tag) and
// carries it there, at most wire.MaxStreams at once (past it, a connection
// is closed at once). It listens until the engine ends the stream.
func (s *server) listen(st *wire.Stream, req wire.Request) {
	if req.Port < 1 || req.Port > 65535 {
		replyErr(st, wire.KindInvalid, fmt.Errorf("port %d is not a TCP port", req.Port))
		return
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(req.Port)))
	if err != nil {
		replyErr(st, wire.KindRefused, fmt.Errorf("listen on 127.0.0.1:%d in the sandbox: %v", req.Port, err))
		return
	}
	if err := wire.WriteJSON(st, wire.KindReply, wire.Reply{}); err != nil {
		l.Close()
		return
	}
	go func() {
		_, _ = io.Copy(io.Discard, st) // the engine ends the stream to stop the listener
		l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		select {
		case s.conns <- struct{}{}:
			go s.forward(c.(*net.TCPConn), req)
		default:
			c.Close()
		}
	}
}

// forward carries one accepted connection to the engine.
func (s *server) forward(c *net.TCPConn, req wire.Request) {
	defer func() { <-s.conns }()
	st, err := s.sess.OpenStream()
	if err != nil {
		c.Close()
		return
	}
	if err := wire.WriteJSON(st, wire.KindRequest, wire.Request{Op: wire.OpConn, Tag: req.Tag, Port: req.Port}); err != nil {
		st.Close()
		c.Close()
		return
	}
	splice(st, c)
}

// copyBuf pools the buffers connections are copied with.
var copyBuf = sync.Pool{New: func() any { b := make([]byte, 128<<10); return &b }}

// splice copies between a stream and a TCP connection until both ways
// have ended; the end of one way is passed on as a half-close.
func splice(st *wire.Stream, c *net.TCPConn) {
	_ = c.SetNoDelay(true)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b := copyBuf.Get().(*[]byte)
		_, _ = io.CopyBuffer(c, st, *b)
		copyBuf.Put(b)
		_ = c.CloseWrite()
	}()
	b := copyBuf.Get().(*[]byte)
	_, err := io.CopyBuffer(st, c, *b)
	copyBuf.Put(b)
	st.Close() // half-close: the engine's side sees the end
	if err != nil {
		c.Close() // the engine's side is gone: no more to read from it either
	}
	wg.Wait()
	c.Close()
}
