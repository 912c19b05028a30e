package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// unreadableToken stands for "no usable token" where a token is compared:
// it is never a token (tokens are URL-safe base64).
const unreadableToken = "\x00unreadable"

// maxDrainBytes bounds how much of an oversized body is read (to learn its
// request id and answer it) before the connection is dropped instead.
const maxDrainBytes = 1 << 30

// guard is the HTTP endpoint's front door, in this order: the bearer token
// (401 and nothing else without it, so nothing about the server is revealed
// before auth), the Origin (403 unless absent or loopback: the DNS-rebinding
// defence the MCP spec asks for), the Host (403 unless it names the bound
// address or localhost), the path, the request size and the requests in
// flight per client and in all (httpbudget.go). Only then does mcp-go see
// the request.
type guard struct {
	h     *HTTPServer
	port  string
	hosts map[string]bool // lower-case names the Host header may carry

	budget *httpBudget // POSTs in flight per client and in all

	mu        sync.Mutex
	lastToken string // the token requests were last checked against; guarded by mu
	lastErr   string // the last token error logged, so it is logged once; guarded by mu
}

func newGuard(h *HTTPServer, addr net.Addr) *guard {
	g := &guard{h: h, hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true},
		budget: newHTTPBudget(MaxInFlight, MaxHTTPInFlight)}
	host, port, _ := net.SplitHostPort(addr.String())
	g.port = port
	g.hosts[strings.ToLower(host)] = true
	if lh, _, err := net.SplitHostPort(h.opts.Listen); err == nil && lh != "" {
		g.hosts[strings.ToLower(strings.Trim(lh, "[]"))] = true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		// Bound to every interface (TLS is then required): the machine's
		// own addresses and name are the bound address.
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					g.hosts[n.IP.String()] = true
				}
			}
		}
		if name, err := os.Hostname(); err == nil {
			g.hosts[strings.ToLower(name)] = true
		}
	}
	return g
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if !loopbackOrigin(r.Header.Get("Origin")) || !g.knownHost(r.Host) {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case PathStreamable, PathSSE, PathMessage:
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		g.h.mux(w, r)
		return
	}
	// The body is read first: a stateless client is named only in it.
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	key := budgetKey(r, body)
	if ok, all := g.budget.take(key); !ok {
		tooManyInFlight(w, all)
		return
	}
	defer g.budget.give(key)
	g.h.mux(w, r)
}

// authorized checks the bearer token in constant time, and ends every
// session when the token has changed since the last request.
func (g *guard) authorized(r *http.Request) bool {
	want, err := g.h.opts.Token()
	if err != nil {
		g.mu.Lock()
		news := err.Error() != g.lastErr
		g.lastErr = err.Error()
		g.mu.Unlock()
		if news {
			g.h.srv.log.Warn("MCP over HTTP refuses every request: no usable token", "err", err)
		}
		return false
	}
	g.noteToken(context.WithoutCancel(r.Context()), want)
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	// Hashing first makes the comparison constant-time in the length too.
	a, b := sha256.Sum256([]byte(strings.TrimSpace(got))), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// noteToken ends every live session when tok differs from the token seen
// before: sessions opened with a rotated token must not outlive it. ctx
// carries the caller's values only: ending sessions is never cut short.
func (g *guard) noteToken(ctx context.Context, tok string) {
	g.mu.Lock()
	changed := g.lastToken != "" && g.lastToken != tok
	g.lastToken = tok
	if tok != unreadableToken {
		g.lastErr = ""
	}
	g.mu.Unlock()
	if changed {
		g.h.srv.log.Info("the HTTP token changed: ending every HTTP session")
		g.h.endSessions(ctx)
	}
}

// watchToken re-reads the token every interval, so that a rotation ends
// sessions that are only listening. It does not return until ctx is done.
func (g *guard) watchToken(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			tok, err := g.h.opts.Token()
			if err != nil {
				tok = unreadableToken // fail closed, as requests do: sessions end
			}
			g.noteToken(context.WithoutCancel(ctx), tok)
		}
	}
}

// loopbackOrigin accepts no Origin (not a browser) or one on this machine.
func loopbackOrigin(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && sandbox.IsLoopbackHost(u.Hostname())
}

// knownHost accepts a Host header naming the bound port on localhost, a
// loopback IP, the bound address or the configured listen host.
func (g *guard) knownHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port != g.port {
		return false
	}
	return g.hosts[strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))]
}

// readBody reads a POST's body under the size limit, puts it back for
// mcp-go and returns it. An oversized one is answered here, as the socket
// answers an oversized line: a tool call gets a tool error naming the limit,
// another request a JSON-RPC error, and the session stays usable.
func (g *guard) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	limit := g.h.srv.opts.MaxRequestBytes + envelopeSlack
	if r.ContentLength > maxDrainBytes {
		w.Header().Set("Connection", "close")
		writeJSONRPC(w, http.StatusRequestEntityTooLarge, errorReply(nil, mcp.INVALID_REQUEST, "request body too large"))
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		writeJSONRPC(w, http.StatusBadRequest, errorReply(nil, mcp.PARSE_ERROR, "could not read the request body"))
		return nil, false
	}
	if len(body) <= limit {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		return body, true
	}
	sniff := &envelopeSniffer{}
	sniff.feed(body)
	rest, _ := io.Copy(sniffWriter{sniff}, io.LimitReader(r.Body, maxDrainBytes))
	over := &oversizeError{size: int64(len(body)) + rest, id: sniff.id, method: sniff.method}
	g.h.srv.log.Warn("mcp request over the size limit", "bytes", over.size, "method", over.method, "transport", "http")
	reply := g.h.srv.oversizeReply(over)
	switch {
	case reply == nil:
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	case r.URL.Path == PathMessage:
		// Legacy SSE answers on the session's stream, not on the POST.
		if err := g.h.sse.SendEventToSession(r.URL.Query().Get("sessionId"), reply); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return nil, false
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		writeJSONRPC(w, http.StatusOK, reply)
	}
	return nil, false
}

// sniffWriter feeds what is copied to it to an envelopeSniffer.
type sniffWriter struct{ s *envelopeSniffer }

func (s sniffWriter) Write(p []byte) (int, error) { s.s.feed(p); return len(p), nil }

// writeJSONRPC writes one JSON-RPC message as the response.
func writeJSONRPC(w http.ResponseWriter, status int, msg json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}
