package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
)

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
	used  *usedSet // the secrets swapped in, when the request had any
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
	m, inTLS := req.Context().Value(mitmKey{}).(*mitm)
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
	if err := plan.apply(req, &s.g.bodies); err != nil {
		v = verdict{rule: "secret body", status: http.StatusBadGateway, body: "sandtray egress: " + r.target() + " is refused: " + err.Error()}
		if be, ok := errors.AsType[*bodyError](err); ok {
			v.status = be.status
		}
		s.g.record(refusalRecord(r, v, start))
		return req, refusal(req, v)
	}
	hr.used = plan.used
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
	var scrub *matcher
	if len(plan.put) > 0 {
		scrub = scrubMatcher(plan.put)
	}
	pctx.RoundTripper = goproxy.RoundTripperFunc(func(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
		resp, err := tr.RoundTrip(req)
		var de *dialError
		if errors.As(err, &de) {
			v := verdict{rule: v.rule, status: http.StatusBadGateway, body: "sandtray egress: " + de.why}
			s.finish(hr, 0, errors.New(v.body))
			return refusal(req, v), nil
		}
		if err != nil {
			// What the sandbox and the record see of it: an error may
			// quote the URL, with a value in its query.
			return nil, errors.New(scrub.replaceString(err.Error()))
		}
		if ce := resp.Header.Get("Content-Encoding"); !scrub.empty() && ce != "" && !strings.EqualFold(ce, "identity") {
			// Go's transport decodes the gzip it asks for; any other
			// encoding would carry an echoed value past the scrub (F41).
			resp.Body.Close()
			v := verdict{rule: "secret encoding", status: http.StatusBadGateway, body: fmt.Sprintf(
				"sandtray egress: %s answered in encoding %q, which the gate cannot check for the value of a secret it put in the request; the answer was dropped", r.target(), ce)}
			hr.rec.Error = v.body
			s.finish(hr, 0, errors.New(v.body))
			return refusal(req, v), nil
		}
		if resp.StatusCode == http.StatusSwitchingProtocols && !scrub.empty() {
			rw, ok := resp.Body.(io.ReadWriteCloser)
			if !ok {
				resp.Body.Close()
				v := verdict{rule: "secret upgrade", status: http.StatusBadGateway, body: "sandtray egress: " + r.target() + " answered an upgrade the gate cannot carry"}
				s.finish(hr, 0, errors.New(v.body))
				return refusal(req, v), nil
			}
			// Every replacement is as long as what it replaces, so the
			// frames of a WebSocket hold (F42, F65).
			scrubHeader(resp.Header, scrub)
			resp.Body = &upgraded{replacer: newPacedReplacer(rw, scrub), rw: rw}
			s.finish(hr, 0, nil)
			return resp, nil
		}
		scrubResponse(resp, scrub)
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
		if hr.used != nil {
			rec.Secrets = hr.used.list()
		}
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
