package transport

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
)

// testTimeout bounds every wait in these tests, so a hang fails rather than
// stalling the suite.
const testTimeout = 10 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Eventually(t, testTimeout, "waiting until "+what, cond)
}

// sessionLog is the Sessions of a test server: it records the sessions
// that start.
type sessionLog struct {
	mu      sync.Mutex
	started []sandbox.Owner
}

func (l *sessionLog) SessionStarted(owner sandbox.Owner) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started = append(l.started, owner)
}

func (l *sessionLog) SessionEnded(string) {}

func (l *sessionLog) startedOwners() []sandbox.Owner {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sandbox.Owner(nil), l.started...)
}

// httpServer is a Server with no tools served over HTTP on a loopback port,
// with the token "first-token". The tests here are of the guard in front of
// mcp-go; those that call tools are in package mcpserver.
type httpServer struct {
	sessions *sessionLog
	url      string // http://127.0.0.1:port
}

// serveHTTP serves a new Server over HTTP with hopts (Token and Listen are
// set here).
func serveHTTP(t *testing.T, hopts HTTPOptions) *httpServer {
	t.Helper()
	hs := &httpServer{sessions: &sessionLog{}}
	srv := New(Options{Name: "transport-test", Sessions: hs.sessions})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs.url = "http://" + ln.Addr().String()
	hopts.Token = func() (string, error) { return "first-token", nil }
	hopts.Listen = ln.Addr().String()
	h := srv.NewHTTP(hopts)
	testwait.Serve(t, testTimeout, func(ctx context.Context) error { return h.Serve(ctx, ln) })
	return hs
}

// sdkHTTPClient connects the go-sdk client over Streamable HTTP at the given
// protocol version.
func sdkHTTPClient(t *testing.T, url, path, token, protocol string) (*sdk.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: token}}
	tr := &sdk.StreamableClientTransport{Endpoint: url + path, HTTPClient: hc, MaxRetries: -1}
	c := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil)
	cs, err := c.Connect(testContext(t), tr, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPRefusesWithoutTheRightToken: 401 with no detail, on every path,
// before anything else is looked at.
func TestHTTPRefusesWithoutTheRightToken(t *testing.T) {
	hs := serveHTTP(t, HTTPOptions{})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, auth := range []string{"", "Bearer wrong-token", "Bearer first-token-and-more", "Basic Zmlyc3QtdG9rZW4=", "first-token"} {
		for _, path := range []string{PathStreamable, PathSSE, PathMessage + "?sessionId=x", "/nope", "/.well-known/oauth-protected-resource"} {
			req, _ := http.NewRequest(http.MethodPost, hs.url+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			got.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || got.Len() != 0 {
				t.Errorf("%s with %q: %d %q, want 401 and an empty body", path, auth, resp.StatusCode, got.String())
			}
		}
	}
	if _, err := sdkHTTPClient(t, hs.url, PathStreamable, "wrong", "2025-11-25"); err == nil {
		t.Error("go-sdk connected with a wrong token")
	}
	if len(hs.sessions.startedOwners()) != 0 {
		t.Error("a session started without the token")
	}
}

// TestHTTPRefusesForeignOriginsAndHosts is the DNS-rebinding defence: a web
// page's request carries its Origin, and a rebound name its Host.
func TestHTTPRefusesForeignOriginsAndHosts(t *testing.T) {
	hs := serveHTTP(t, HTTPOptions{})
	port := strings.TrimPrefix(hs.url, "http://127.0.0.1:")
	cases := []struct {
		origin, host string
		want         int
	}{
		{"https://evil.example", "", http.StatusForbidden},
		{"http://localhost.evil.example:" + port, "", http.StatusForbidden},
		{"null", "", http.StatusForbidden},
		{"", "evil.example:" + port, http.StatusForbidden},
		{"", "localhost:1", http.StatusForbidden},
		{"http://localhost:3000", "", http.StatusOK},
		{"http://127.0.0.1:" + port, "localhost:" + port, http.StatusOK},
		{"", "[::1]:" + port, http.StatusOK},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, hs.url+PathStreamable, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer first-token")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Origin %q Host %q: %d, want %d", c.origin, c.host, resp.StatusCode, c.want)
		}
	}
}
