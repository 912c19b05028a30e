package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
)

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
		m := &mitm{box: r.box, host: host, port: port, rule: v.rule, addrs: v.addrs}
		return &goproxy.ConnectAction{Action: goproxy.ConnectHijack, Hijack: s.terminate(m)}, target
	}
	// Dialed here, not when goproxy dials, so that a failure is a refusal
	// whose status line says what happened.
	c, addr, err := s.g.dialChecked(pctx.Req.Context(), v.addrs, port)
	rec := Record{SandboxID: r.box, Host: host, Port: port, Method: r.method, Decision: DecisionAllow, Rule: v.rule, Address: addr}
	if err != nil {
		fail := verdict{rule: v.rule, status: http.StatusBadGateway, body: "sandtray egress: " + err.Error()}
		rec.Error, rec.DurationMS = fail.body, time.Since(start).Milliseconds()
		s.g.record(rec)
		pctx.Resp = refusal(pctx.Req, fail)
		return goproxy.RejectConnect, target
	}
	cc := &countConn{TCPConn: c, start: start}
	cc.done = func(up, down int64, d time.Duration) {
		rec.BytesUp, rec.BytesDown, rec.DurationMS = up, down, d.Milliseconds()
		s.g.record(rec)
		s.g.tunnelDone(cc)
	}
	if !s.g.openTunnel(cc) {
		c.Close()
		pctx.Resp = refusal(pctx.Req, verdict{rule: "closed", status: http.StatusServiceUnavailable, body: errGateClosed.Error()})
		return goproxy.RejectConnect, target
	}
	pctx.Dialer = func(context.Context, string, string) (net.Conn, error) { return cc, nil }
	return goproxy.OkConnect, target
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

// dialChecked connects to the first of addrs (the ones decide checked)
// that answers, on port. Its error says in words why none did.
func (g *Gate) dialChecked(ctx context.Context, addrs []netip.Addr, port int) (*net.TCPConn, string, error) {
	var whys []string
	for _, a := range addrs {
		addr := netip.AddrPortFrom(a, uint16(port)).String()
		c, err := g.dial(ctx, "tcp", addr)
		if err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				return tc, addr, nil
			}
			c.Close()
			err = errors.New("not a TCP connection")
		}
		whys = append(whys, addr+": "+dialWhy(err))
	}
	return nil, "", &dialError{"could not connect to " + strings.Join(whys, "; ")}
}

// dialError is dialChecked's: what a refusal says of a failed dial.
type dialError struct{ why string }

func (e *dialError) Error() string { return e.why }

// dialWhy says in a few words why a dial failed.
func dialWhy(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (nothing listens on that port)"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to it"
	case errors.Is(err, context.Canceled):
		return "the client gave up"
	}
	return "the connection failed"
}
