package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
)

// A CONNECT to a host one of the sandbox's secrets is bound to is answered
// by the gate itself: it terminates the sandbox's TLS with a certificate of
// the install's CA and hands the connection inside it to its own
// http.Server, as if the sandbox had opened it, so that each request in it
// is read under the same limits (maxHeaderBytes, the timeouts) and goes
// through onRequest, which swaps its placeholders. goproxy's own loop for
// this reads requests without a bound.

// mitm is what a CONNECT whose TLS the gate terminates hands to each
// request inside it: the decision already made, for the host it named.
type mitm struct {
	box, host string
	port      int
	rule      string
	addrs     []netip.Addr
	scheme    string // "https", or "http" when the sandbox spoke no TLS in it
}

// mitmKey carries a terminated connection's *mitm in its requests' contexts.
type mitmKey struct{}

// mitmConn is the connection inside a CONNECT the gate terminated, as its
// http.Server serves it.
type mitmConn struct {
	net.Conn
	m *mitm
}

// handshakeTimeout bounds a terminated CONNECT's first bytes and TLS
// handshake.
const handshakeTimeout = 30 * time.Second

// terminate is the hijack of an allowed CONNECT to a bound host: it says
// 200, terminates the sandbox's TLS (or takes plain HTTP as it comes), and
// hands the connection to the server.
func (s *server) terminate(m *mitm) func(*http.Request, net.Conn, *goproxy.ProxyCtx) {
	return func(req *http.Request, client net.Conn, pctx *goproxy.ProxyCtx) {
		if _, err := io.WriteString(client, "HTTP/1.1 200 OK\r\n\r\n"); err != nil {
			client.Close()
			return
		}
		client.SetReadDeadline(time.Now().Add(handshakeTimeout))
		br := bufio.NewReaderSize(client, 16)
		first, err := br.Peek(1)
		if err != nil {
			client.Close()
			return
		}
		var c net.Conn = &peekedConn{Conn: client, r: br}
		m.scheme = "http"
		if first[0] == 0x16 { // a TLS handshake record
			cfg, err := goproxy.TLSConfigFromCA(&s.g.o.CA.Cert)(m.host, pctx)
			if err != nil {
				s.g.log.Warn("egress: sign a certificate for a bound host", "host", m.host, "err", err)
				client.Close()
				return
			}
			cfg = cfg.Clone()
			cfg.NextProtos = []string{"http/1.1"}
			tc := tls.Server(c, cfg)
			ctx, cancel := context.WithTimeout(req.Context(), handshakeTimeout)
			err = tc.HandshakeContext(ctx)
			cancel()
			if err != nil {
				client.Close()
				return
			}
			c, m.scheme = tc, "https"
		}
		client.SetReadDeadline(time.Time{})
		select {
		case s.conns <- &mitmConn{Conn: c, m: m}:
		case <-s.done:
			c.Close()
		}
	}
}

// peekedConn reads through the reader that peeked at its first byte.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// inTunnel makes a request inside a terminated CONNECT a proxy request for
// the host the CONNECT named (whatever its own URL or Host header says),
// before goproxy sees it; a CONNECT inside one is refused.
func (s *server) inTunnel(p http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := r.Context().Value(mitmKey{}).(*mitm)
		if !ok {
			p.ServeHTTP(w, r)
			return
		}
		target := hostPort(m.host, m.port)
		if r.Method == http.MethodConnect {
			http.Error(w, "sandtray egress: a CONNECT inside the connection to "+target+" goes nowhere; connect to the gate for each host", http.StatusBadRequest)
			return
		}
		r.URL.Scheme, r.URL.Host = m.scheme, target
		if m.scheme == "https" && m.port == 443 || m.scheme == "http" && m.port == 80 {
			r.URL.Host = strings.TrimSuffix(target, ":"+strconv.Itoa(m.port))
		}
		p.ServeHTTP(w, r)
	})
}

// certCache keeps the certificates the gate made for bound hosts.
type certCache struct {
	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

func newCertCache() *certCache { return &certCache{certs: map[string]*tls.Certificate{}} }

func (c *certCache) Fetch(host string, gen func() (*tls.Certificate, error)) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cert := c.certs[host]; cert != nil {
		return cert, nil
	}
	cert, err := gen()
	if err != nil {
		return nil, err
	}
	if len(c.certs) > 1000 {
		clear(c.certs)
	}
	c.certs[host] = cert
	return cert, nil
}
