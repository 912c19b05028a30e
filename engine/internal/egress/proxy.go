package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
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
		Handler:           p,
		ReadHeaderTimeout: 60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if bc, ok := c.(*boxConn); ok {
				return context.WithValue(ctx, boxKey{}, bc.box)
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

// onConnect decides a CONNECT; an allowed one dials the checked address.
// A CONNECT to a host one of the sandbox's secrets is bound to has its TLS
// terminated by the gate (with the install's CA), so that each request in
// it has its placeholders swapped (onRequest); any other is a tunnel the
// gate does not look into.
func (s *server) onConnect(target string, pctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	start := time.Now()
	host, port, err := hostrule.Target(target, 443)
	if err != nil {
		v := s.g.badTarget(boxOf(pctx.Req), target, http.MethodConnect, err, start)
		pctx.Resp = refusal(pctx.Req, v)
		return goproxy.RejectConnect, target
	}
	r := request{box: boxOf(pctx.Req), host: host, port: port, method: http.MethodConnect}
	phs := s.g.placeholders(r.box)
	if sec := unboundIn(phs, host, port, headerTexts(target, pctx.Req.Header)...); sec != nil {
		s.g.refuseSecret(r, sec, violationVerdict(r, sec), start)
		pctx.Resp = refusal(pctx.Req, violationVerdict(r, sec))
		return goproxy.RejectConnect, target
	}
	v := s.g.decide(pctx.Req.Context(), r)
	if !v.allow {
		s.g.record(refusalRecord(r, v, start))
		pctx.Resp = refusal(pctx.Req, v)
		return goproxy.RejectConnect, target
	}
	if s.g.o.CA != nil && bound(phs, host, port) {
		pctx.UserData = &mitm{box: r.box, host: host, port: port, rule: v.rule, addrs: v.addrs}
		return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: s.mitmTLS}, target
	}
	pctx.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		c, addr, err := s.g.dialChecked(ctx, v.addrs, port)
		rec := Record{SandboxID: r.box, Host: host, Port: port, Method: r.method, Decision: DecisionAllow, Rule: v.rule, Address: addr}
		if err != nil {
			rec.Error, rec.DurationMS = err.Error(), time.Since(start).Milliseconds()
			s.g.record(rec)
			return nil, err
		}
		cc := &countConn{TCPConn: c, start: start}
		cc.done = func(up, down int64, d time.Duration) {
			rec.BytesUp, rec.BytesDown, rec.DurationMS = up, down, d.Milliseconds()
			s.g.record(rec)
			s.g.tunnelDone(cc)
		}
		if !s.g.openTunnel(cc) {
			c.Close()
			return nil, errGateClosed
		}
		return cc, nil
	}
	return goproxy.OkConnect, target
}

// mitm is what a CONNECT whose TLS the gate terminates hands to each
// request inside it: the decision already made, for the host it named.
type mitm struct {
	box, host string
	port      int
	rule      string
	addrs     []netip.Addr
}

// headerTexts is s and every header name and value, to look for
// placeholders in.
func headerTexts(s string, h http.Header) []string {
	out := []string{s}
	for k, vs := range h {
		out = append(out, k)
		out = append(out, vs...)
	}
	return out
}

// placeholders are sandbox id's secrets' placeholders.
func (g *Gate) placeholders(id string) []placeholder {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.boxes[id]; b != nil {
		return b.phs
	}
	return nil
}

// refuseSecret records the refusal of a placeholder sent to a host its
// secret is not bound to, as a violation.
func (g *Gate) refuseSecret(r request, sec *secret, v verdict, start time.Time) {
	rec := refusalRecord(r, v, start)
	rec.Violation = sec.Name
	g.log.Warn("egress: a request with a secret's placeholder refused", "sandbox", r.box, "secret", sec.Name, "host", r.target(), "rule", v.rule)
	g.record(rec)
}

// mitmTLS is the certificate the gate shows a sandbox for a bound host,
// signed by the install's CA (cached per host).
func (s *server) mitmTLS(host string, pctx *goproxy.ProxyCtx) (*tls.Config, error) {
	return goproxy.TLSConfigFromCA(&s.g.o.CA.Cert)(host, pctx)
}

// dialChecked connects to the first of addrs (the ones decide checked)
// that answers, on port.
func (g *Gate) dialChecked(ctx context.Context, addrs []netip.Addr, port int) (*net.TCPConn, string, error) {
	var errs []error
	for _, a := range addrs {
		addr := netip.AddrPortFrom(a, uint16(port)).String()
		c, err := g.dial(ctx, "tcp", addr)
		if err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				return tc, addr, nil
			}
			c.Close()
			err = fmt.Errorf("not a TCP connection")
		}
		errs = append(errs, err)
	}
	return nil, "", fmt.Errorf("sandtray egress: could not connect: %w", errors.Join(errs...))
}

// refusal is the 403 (or 502) with the verdict's one line.
func refusal(req *http.Request, v verdict) *http.Response {
	resp := goproxy.NewResponse(req, goproxy.ContentTypeText, v.status, v.body+"\n")
	resp.Header.Set("X-Sandtray-Egress", "refused")
	resp.Close = true
	return resp
}

// badTarget refuses and records a request whose target (a CONNECT's, a
// URL's host) is no host:port the gate reads (hostrule.Target's err): 400,
// with what the sandbox wrote cut short in the record.
func (g *Gate) badTarget(box, target, method string, err error, start time.Time) verdict {
	why := strings.TrimSuffix(err.Error(), ": "+sandbox.ErrInvalid.Error())
	v := verdict{rule: "bad target", status: http.StatusBadRequest, body: "sandtray egress: " + why}
	host := target
	if len(host) > 64 {
		host = strings.ToValidUTF8(host[:64], "") + "…"
	}
	g.record(refusalRecord(request{box: box, host: host, method: method}, v, start))
	return v
}

func refusalRecord(r request, v verdict, start time.Time) Record {
	return Record{SandboxID: r.box, Host: r.host, Port: r.port, Method: r.method, Decision: DecisionDeny,
		Rule: v.rule, Error: v.body, DurationMS: time.Since(start).Milliseconds()}
}

// checkedKey carries a plain-HTTP request's checked addresses to the
// sandbox's transport's dial.
type checkedKey struct{}

type checked struct {
	addrs []netip.Addr
	g     *Gate
	addr  *string // set to the address dialed
}

// transport is a sandbox's own pool of upstream connections for plain
// HTTP: it dials only the addresses decide checked for the request.
func (g *Gate) transport() *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, hp string) (net.Conn, error) {
			c, ok := ctx.Value(checkedKey{}).(checked)
			if !ok {
				return nil, errors.New("sandtray egress: no checked address")
			}
			_, ps, _ := net.SplitHostPort(hp)
			port, _ := strconv.Atoi(ps)
			conn, addr, err := c.g.dialChecked(ctx, c.addrs, port)
			if c.addr != nil {
				*c.addr = addr
			}
			if err != nil {
				return nil, err
			}
			return conn, nil
		},
		// A bound host's certificate, when the gate terminates its TLS:
		// the system's roots and egress.trust_ca.
		TLSClientConfig:       &tls.Config{RootCAs: g.o.UpstreamRoots},
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
	}
}

// httpRecord is what a plain-HTTP request carries from onRequest to its
// response's end; its record is owed (Gate.owe) until finish writes it.
type httpRecord struct {
	rec   Record
	start time.Time
	up    *countReader
	addr  string
	once  sync.Once
}

// onRequest decides a plain-HTTP request, or takes the decision of the
// CONNECT a request came in whose TLS the gate terminates. An allowed one
// goes through the sandbox's transport to the checked address, with its
// Host header set to the host decided on, so an allowed server cannot be
// asked for another site it hosts. The placeholders of the secrets bound to
// the host are swapped for their values; one of a secret not bound to it
// is refused.
func (s *server) onRequest(req *http.Request, pctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	start := time.Now()
	var r request
	var v verdict
	m, inTLS := pctx.UserData.(*mitm)
	if inTLS {
		r = request{box: m.box, host: m.host, port: m.port, method: req.Method}
		req.URL.Host = r.target()
		if (req.URL.Scheme == "https" && m.port == 443) || (req.URL.Scheme == "http" && m.port == 80) {
			req.URL.Host = strings.TrimSuffix(r.target(), ":"+strconv.Itoa(m.port))
		}
	} else {
		def := 80
		if req.URL.Scheme == "https" {
			def = 443
		}
		host, port, err := hostrule.Target(req.URL.Host, def)
		if err != nil {
			return req, refusal(req, s.g.badTarget(boxOf(req), req.URL.Host, req.Method, err, start))
		}
		r = request{box: boxOf(req), host: host, port: port, method: req.Method}
		req.URL.Host = r.target()
		if port == def {
			req.URL.Host = strings.TrimSuffix(r.target(), ":"+strconv.Itoa(port))
		}
	}
	phs := s.g.placeholders(r.box)
	plan := planFor(phs, r.host, r.port, req)
	if plan.violation != nil {
		s.g.refuseSecret(r, plan.violation, violationVerdict(r, plan.violation), start)
		return req, refusal(req, violationVerdict(r, plan.violation))
	}
	if plan.plain != nil {
		s.g.refuseSecret(r, plan.plain, plainVerdict(r, plan.plain), start)
		return req, refusal(req, plainVerdict(r, plan.plain))
	}
	if inTLS {
		v = verdict{allow: true, rule: m.rule, addrs: m.addrs}
	} else {
		v = s.g.decide(req.Context(), r)
	}
	if !v.allow {
		s.g.record(refusalRecord(r, v, start))
		return req, refusal(req, v)
	}
	s.g.mu.Lock()
	var tr *http.Transport
	if b := s.g.boxes[r.box]; b != nil {
		tr = b.transport
	}
	s.g.mu.Unlock()
	if tr == nil {
		v = deny(r, "unknown sandbox", "is refused: this sandbox is not on the egress gate")
		s.g.record(refusalRecord(r, v, start))
		return req, refusal(req, v)
	}
	hr := &httpRecord{start: start, rec: Record{SandboxID: r.box, Host: r.host, Port: r.port, Method: req.Method, Decision: DecisionAllow, Rule: v.rule}}
	req.Host = req.URL.Host
	if err := plan.apply(req); err != nil {
		v = verdict{rule: "secret body", status: http.StatusRequestEntityTooLarge, body: "sandtray egress: " + r.target() + " is refused: " + err.Error()}
		s.g.record(refusalRecord(r, v, start))
		return req, refusal(req, v)
	}
	hr.rec.Secrets = plan.used
	if req.Body != nil && req.Body != http.NoBody {
		hr.up = &countReader{ReadCloser: req.Body}
		req.Body = hr.up
	}
	if !s.g.owe() {
		v = verdict{rule: "closed", status: http.StatusServiceUnavailable, body: errGateClosed.Error()}
		s.g.record(refusalRecord(r, v, start))
		return req, refusal(req, v)
	}
	req = req.WithContext(context.WithValue(req.Context(), checkedKey{}, checked{addrs: v.addrs, g: s.g, addr: &hr.addr}))
	pctx.UserData = hr
	pctx.RoundTripper = goproxy.RoundTripperFunc(func(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			// What the sandbox and the record see of it: an error may
			// quote the URL, with a value in its query.
			return nil, errors.New(scrubText(err.Error(), plan.scrub))
		}
		if ce := resp.Header.Get("Content-Encoding"); len(plan.scrub) > 0 && ce != "" && !strings.EqualFold(ce, "identity") {
			// Go's transport decodes the gzip it asks for; any other
			// encoding would carry an echoed value past the scrub (F41).
			resp.Body.Close()
			v := verdict{rule: "secret encoding", status: http.StatusBadGateway, body: fmt.Sprintf(
				"sandtray egress: %s answered in encoding %q, which the gate cannot check for the value of a secret it put in the request; the answer was dropped", r.target(), ce)}
			hr.rec.Error = v.body
			s.finish(hr, 0, errors.New(v.body))
			return refusal(req, v), nil
		}
		if resp.StatusCode == http.StatusSwitchingProtocols && len(plan.scrub) > 0 {
			rw, ok := resp.Body.(io.ReadWriteCloser)
			if !ok || !sameLengths(plan.scrub) {
				// A value shorter than a placeholder cannot be put back
				// in a frame without changing its length (F42).
				resp.Body.Close()
				v := verdict{rule: "secret upgrade", status: http.StatusBadGateway, body: "sandtray egress: " + r.target() +
					" is refused: an upgraded connection (a WebSocket) carries a secret whose value is shorter than 32 characters, which the gate cannot keep out of what the host sends back"}
				s.finish(hr, 0, errors.New(v.body))
				return refusal(req, v), nil
			}
			resp.Body = &upgraded{Reader: newReplaceReader(io.NopCloser(rw), plan.scrub), rw: rw}
			s.finish(hr, 0, nil)
			return resp, nil
		}
		scrubResponse(resp, plan.scrub)
		// Counted here, before goproxy sees the body: a body it did not
		// get from the round trip loses its Content-Length.
		resp.Body = &countReader{ReadCloser: resp.Body, onClose: func(n int64) { s.finish(hr, n, nil) }}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			// The upstream connection's own; the sandbox's stays open.
			resp.Header.Del("Connection")
			resp.Header.Del("Keep-Alive")
		}
		return resp, nil
	})
	return req, nil
}

// finish records a plain-HTTP request once, with down bytes sent back.
func (s *server) finish(hr *httpRecord, down int64, err error) {
	hr.once.Do(func() {
		rec := hr.rec
		rec.Address = hr.addr
		if hr.up != nil {
			rec.BytesUp = hr.up.n.Load()
		}
		rec.BytesDown, rec.DurationMS = down, time.Since(hr.start).Milliseconds()
		if err != nil {
			rec.Error = err.Error()
		}
		s.g.record(rec)
		s.g.owed.Done()
	})
}

// onResponse records a plain-HTTP request whose round trip failed (one that
// got a response is recorded when its body is closed).
func (s *server) onResponse(resp *http.Response, pctx *goproxy.ProxyCtx) *http.Response {
	hr, ok := pctx.UserData.(*httpRecord)
	if !ok || resp != nil {
		return resp
	}
	err := pctx.Error
	if err == nil {
		err = errors.New("no response")
	}
	s.finish(hr, 0, err)
	return resp
}
