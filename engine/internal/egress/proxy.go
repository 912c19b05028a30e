package egress

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
)

// server is the gate's proxy: one http.Server serving goproxy on the
// connections the channel hands over (ServeConn), each carrying the id of
// the sandbox it came from.
type server struct {
	g     *Gate
	http  *http.Server
	conns chan net.Conn // the listener's queue (connListener)
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// boxKey carries a connection's sandbox id in its requests' contexts.
type boxKey struct{}

// maxHeaderBytes bounds a request line and its headers, from a sandbox or
// inside a connection whose TLS the gate terminates: past it (and the 4 KiB
// net/http allows over), the request is refused with 431 and nothing of it
// is kept (F63).
const maxHeaderBytes = 32 << 10

func newServer(g *Gate) *server {
	s := &server{g: g, conns: make(chan net.Conn), done: make(chan struct{})}
	p := goproxy.NewProxyHttpServer()
	p.Logger = log.New(io.Discard, "", 0)
	// Never a proxy from the host's environment, never a dial the gate
	// did not check: CONNECT dials through ProxyCtx.Dialer, plain HTTP
	// through the sandbox's transport (ProxyCtx.RoundTripper), both on
	// the checked address.
	p.ConnectDial, p.ConnectDialWithReq = nil, nil
	p.Tr = &http.Transport{Proxy: nil, DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("sandtray egress: no checked address")
	}}
	p.NonproxyHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "sandtray egress: this is Sandtray's egress gate; send it proxy requests (absolute URLs or CONNECT)", http.StatusBadRequest)
	})
	p.CertStore = newCertCache()
	p.OnRequest().HandleConnectFunc(s.onConnect)
	p.OnRequest().DoFunc(s.onRequest)
	p.OnResponse().DoFunc(s.onResponse)
	s.http = &http.Server{
		Handler:           s.inTunnel(p),
		MaxHeaderBytes:    maxHeaderBytes,
		ReadHeaderTimeout: 60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			switch c := c.(type) {
			case *boxConn:
				return context.WithValue(ctx, boxKey{}, c.box)
			case *mitmConn:
				return context.WithValue(context.WithValue(ctx, boxKey{}, c.m.box), mitmKey{}, c.m)
			}
			return ctx
		},
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.http.Serve(connListener{s})
	}()
	return s
}

func (s *server) close() {
	s.once.Do(func() { close(s.done) })
	_ = s.http.Close()
	s.wg.Wait()
}

// connListener is the http.Server's listener: Accept returns the
// connections ServeConn queues.
type connListener struct{ s *server }

func (l connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.s.conns:
		return c, nil
	case <-l.s.done:
		return nil, net.ErrClosed
	}
}
func (l connListener) Close() error   { l.s.once.Do(func() { close(l.s.done) }); return nil }
func (l connListener) Addr() net.Addr { return gateAddr{} }

type gateAddr struct{}

func (gateAddr) Network() string { return "sandtray" }
func (gateAddr) String() string  { return "egress-gate" }

// Stream is one connection from a sandbox as the channel hands it over: a
// relay process's stdout (Read) and stdin (Write, CloseWrite).
type Stream interface {
	io.ReadWriteCloser
	CloseWrite() error
}

// boxConn is the gate's end of one connection from sandbox box: one end of
// a net.Pipe (which has the deadlines net/http needs) whose other end is
// pumped to and from the stream.
type boxConn struct {
	net.Conn
	box string
	st  Stream
}

// end closes both the gate's end and the stream.
func (c *boxConn) end() {
	c.Conn.Close()
	c.st.Close()
}

// errGateClosed is what a connection gets while the gate closes.
var errGateClosed = errors.New("sandtray egress: Sandtray is shutting down; try again when it is back")

// lingerAfterReply bounds how long a relay may go on after the gate has
// said everything (its stdin closed), for the sandbox's client to close.
const lingerAfterReply = 30 * time.Second

// ServeConn serves one connection from sandbox id (as the channel knows
// it) and returns at once; the connection ends with the stream, when the
// sandbox is unregistered, or when the gate closes. A sandbox the gate does
// not know gets its requests refused.
func (g *Gate) ServeConn(id string, st Stream) {
	mine, theirs := net.Pipe()
	c := &boxConn{Conn: mine, box: id, st: st}
	g.mu.Lock()
	b := g.boxes[id]
	if g.closed || b == nil {
		g.mu.Unlock()
		st.Close()
		mine.Close()
		return
	}
	b.conns[c] = struct{}{}
	g.mu.Unlock()
	upDone := make(chan struct{})
	go func() { // from the sandbox
		defer close(upDone)
		_, _ = io.Copy(theirs, st)
		theirs.Close()
	}()
	go func() { // to the sandbox: once the gate is done, its stdin ends,
		// and the relay passes everything on before it ends
		_, _ = io.Copy(st, theirs)
		_ = st.CloseWrite()
		select {
		case <-upDone:
		case <-time.After(lingerAfterReply):
		}
		st.Close()
		theirs.Close()
		g.mu.Lock()
		if b := g.boxes[id]; b != nil {
			delete(b.conns, c)
		}
		g.mu.Unlock()
	}()
	select {
	case g.srv.conns <- c:
	case <-g.srv.done:
		c.end()
	}
}

// boxOf is the sandbox a request came from.
func boxOf(r *http.Request) string {
	id, _ := r.Context().Value(boxKey{}).(string)
	return id
}
