package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/mcpserver/transport"
)

// httpServer is a Server on a fake backend served over HTTP on a loopback
// port, with a token the test can rotate.
type httpServer struct {
	fake *fakeBackend
	srv  *Server
	http *HTTPServer
	url  string // http://127.0.0.1:port

	mu       sync.Mutex
	token    string
	tokenErr error // the token file became unusable
}

func serveHTTP(t *testing.T, opts Options) *httpServer {
	t.Helper()
	return serveHTTPWith(t, opts, HTTPOptions{})
}

// serveHTTPWith is serveHTTP with HTTP options (Token and Listen are set here).
func serveHTTPWith(t *testing.T, opts Options, hopts HTTPOptions) *httpServer {
	t.Helper()
	hs := &httpServer{fake: newFake(), token: "first-token"}
	hs.fake.outcome = sandbox.ExecOutcome{SandboxID: hs.fake.info.ID, Result: sandbox.ExecResult{Stdout: "hi\n"}}
	hs.srv = newServer(hs.fake, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs.url = "http://" + ln.Addr().String()
	hopts.Token, hopts.Listen = hs.currentToken, ln.Addr().String()
	if hopts.TokenCheck == 0 {
		hopts.TokenCheck = 50 * time.Millisecond
	}
	hs.http = hs.srv.NewHTTP(hopts)
	testwait.Serve(t, testTimeout, func(ctx context.Context) error { return hs.http.Serve(ctx, ln) })
	return hs
}

func (hs *httpServer) currentToken() (string, error) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.token, hs.tokenErr
}

func (hs *httpServer) rotate(tok string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.token = tok
}

// bearer adds a token (and any other headers) to every request.
type bearer struct {
	token   string
	headers map[string]string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	for k, v := range b.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// sdkHTTPClient connects the go-sdk client over Streamable HTTP ("/mcp") or
// SSE ("/sse") at the given protocol version.
func sdkHTTPClient(t *testing.T, url, path, token, protocol string) (*sdk.ClientSession, error) {
	t.Helper()
	return sdkHTTPClientWith(t, url, path, token, protocol, nil)
}

// sdkHTTPClientWith is sdkHTTPClient with client options.
func sdkHTTPClientWith(t *testing.T, url, path, token, protocol string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: token}}
	var tr sdk.Transport = &sdk.StreamableClientTransport{Endpoint: url + path, HTTPClient: hc, MaxRetries: -1}
	if path == PathSSE {
		tr = &sdk.SSEClientTransport{Endpoint: url + path, HTTPClient: hc}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, opts)
	cs, err := c.Connect(testContext(t), tr, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestHTTPTransportsServeEveryProtocolVersion(t *testing.T) {
	hs := serveHTTP(t, Options{})
	cases := []struct{ path, protocol string }{
		{PathStreamable, "2026-07-28"},
		{PathStreamable, "2025-11-25"},
		{PathStreamable, "2025-06-18"},
		{PathStreamable, "2025-03-26"},
		{PathSSE, "2024-11-05"},
		{PathSSE, "2025-11-25"},
	}
	for _, c := range cases {
		t.Run(c.path+" "+c.protocol, func(t *testing.T) {
			cs, err := sdkHTTPClient(t, hs.url, c.path, "first-token", c.protocol)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != c.protocol {
				t.Errorf("negotiated %s, want %s", got, c.protocol)
			}
			res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "echo hi"}})
			if err != nil {
				t.Fatalf("execute_command: %v", err)
			}
			if m, _ := res.StructuredContent.(map[string]any); m["stdout"] != "hi\n" {
				t.Errorf("execute_command over %s %s: %v", c.path, c.protocol, res.StructuredContent)
			}
		})
	}
	started := hs.fake.sessionsStarted()
	if len(started) != len(cases) {
		t.Errorf("%d Sandtray sessions started, want one per client (%d): %v", len(started), len(cases), started)
	}
	for _, o := range started {
		if o.Session == "" || o.Client != "http-test 1" {
			t.Errorf("session owner %+v: want an id and the client's name", o)
		}
	}
}

// TestHTTPOversizeRequestIsRefusedAndTheSessionGoesOn: a request over the
// limit gets a tool error naming the limit (never read into memory whole),
// and the same session keeps working.
func TestHTTPOversizeRequestIsRefusedAndTheSessionGoesOn(t *testing.T) {
	hs := serveHTTP(t, Options{MaxRequestBytes: 1 << 20})
	for _, path := range []string{PathStreamable, PathSSE} {
		t.Run(path, func(t *testing.T) {
			cs, err := sdkHTTPClient(t, hs.url, path, "first-token", "2025-11-25")
			if err != nil {
				t.Fatal(err)
			}
			ctx := testContext(t)
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{
				"sandbox_id": "x", "path": "big", "content": strings.Repeat("x", 8<<20)}})
			if err != nil {
				t.Fatalf("an oversized call should be a tool error, got %v", err)
			}
			if !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), "over the limit") {
				t.Errorf("oversized call: %+v", res)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "echo hi"}})
			if err != nil || res.IsError {
				t.Errorf("the session is unusable after an oversized request: %v %+v", err, res)
			}
		})
	}
	hs.fake.mu.Lock()
	defer hs.fake.mu.Unlock()
	for _, c := range hs.fake.calls {
		if c.Method == "WriteFile" {
			t.Error("the oversized write reached the backend")
		}
	}
}

// TestHTTPTokenRotationEndsLiveSessions: once the token changes, sessions
// opened with the old one end (the backend hears it), the old token gets 401,
// and the new one works.
func TestHTTPTokenRotationEndsLiveSessions(t *testing.T) {
	hs := serveHTTP(t, Options{})
	ctx := testContext(t)
	var ids []string
	for _, path := range []string{PathStreamable, PathSSE} {
		cs, err := sdkHTTPClient(t, hs.url, path, "first-token", "2025-11-25")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "true"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range hs.fake.sessionsStarted() {
		ids = append(ids, o.Session)
	}
	hs.rotate("second-token")
	ended := map[string]bool{}
	for len(ended) < len(ids) {
		select {
		case id := <-hs.fake.endedCh:
			ended[id] = true
		case <-ctx.Done():
			t.Fatalf("sessions %v did not end after the token rotated; ended: %v", ids, ended)
		}
	}
	if _, err := sdkHTTPClient(t, hs.url, PathStreamable, "first-token", "2025-11-25"); err == nil {
		t.Error("the old token still connects")
	}
	if _, err := sdkHTTPClient(t, hs.url, PathStreamable, "second-token", "2025-11-25"); err != nil {
		t.Errorf("the new token: %v", err)
	}
}

// TestHTTPIdleSessionExpires: a Streamable HTTP client that goes away
// without ending its session (no DELETE) has its session ended once idle, so
// its ephemeral sandboxes are reaped as a closed socket's are.
func TestHTTPIdleSessionExpires(t *testing.T) {
	hs := serveHTTPWith(t, Options{}, HTTPOptions{SessionIdle: time.Second})
	cs, err := sdkHTTPClient(t, hs.url, PathStreamable, "first-token", "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "true"}}); err != nil {
		t.Fatal(err)
	}
	started := hs.fake.sessionsStarted()
	if len(started) != 1 {
		t.Fatalf("sessions started: %v", started)
	}
	select {
	case id := <-hs.fake.endedCh:
		if id != started[0].Session {
			t.Errorf("ended %s, want %s", id, started[0].Session)
		}
	case <-time.After(testTimeout):
		t.Fatal("an idle HTTP session never ended")
	}
}

// TestHTTPBoundsRequestsInFlightPerSession: as on the socket, one session
// runs at most transport.MaxInFlight requests at once; beyond that it is told to wait
// (429), and other sessions are unaffected.
func TestHTTPBoundsRequestsInFlightPerSession(t *testing.T) {
	hs := serveHTTP(t, Options{})
	release := make(chan struct{})
	started := make(chan struct{}, 2*transport.MaxInFlight)
	hs.fake.onExec = func(ctx context.Context, _ sandbox.Owner, _ sandbox.CommandRequest) sandbox.ExecOutcome {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return sandbox.ExecOutcome{Result: sandbox.ExecResult{Stdout: "ok\n"}}
	}
	waitStarted := func(n int) {
		for range n {
			select {
			case <-started:
			case <-time.After(testTimeout):
				t.Fatal("calls did not start")
			}
		}
	}
	post := func(session string) int {
		req, _ := http.NewRequest(http.MethodPost, hs.url+PathStreamable, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_command","arguments":{"command":"x"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer first-token")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	session := func() string {
		req, _ := http.NewRequest(http.MethodPost, hs.url+PathStreamable, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer first-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Mcp-Session-Id")
	}
	busy, other := session(), session()
	var calls sync.WaitGroup
	for range transport.MaxInFlight {
		calls.Go(func() {
			if code := post(busy); code != http.StatusOK {
				t.Errorf("a call within the limit: %d", code)
			}
		})
	}
	waitStarted(transport.MaxInFlight)
	if code := post(busy); code != http.StatusTooManyRequests {
		t.Errorf("call %d in flight on one session: %d, want 429", transport.MaxInFlight+1, code)
	}
	calls.Go(func() {
		if code := post(other); code != http.StatusOK {
			t.Errorf("another session while the first is full: %d, want 200", code)
		}
	})
	waitStarted(1) // the other session's call runs while the first is full
	close(release)
	calls.Wait()
}

// TestHTTPFailsClosedWithoutAUsableToken: when the token file goes away or
// turns unreadable, every request is refused and live sessions end.
func TestHTTPFailsClosedWithoutAUsableToken(t *testing.T) {
	hs := serveHTTP(t, Options{})
	cs, err := sdkHTTPClient(t, hs.url, PathStreamable, "first-token", "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "true"}}); err != nil {
		t.Fatal(err)
	}
	hs.mu.Lock()
	hs.tokenErr = errors.New("token file gone")
	hs.mu.Unlock()
	select {
	case <-hs.fake.endedCh:
	case <-ctx.Done():
		t.Fatal("the session outlived its token")
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "true"}}); err == nil {
		t.Error("a call succeeded with no usable token")
	}
}

// TestHTTPSessionsHearOfSandboxChanges: as socket clients do, HTTP clients
// get notifications/resources/list_changed when sandboxes come and go.
func TestHTTPSessionsHearOfSandboxChanges(t *testing.T) {
	hs := serveHTTP(t, Options{})
	for _, path := range []string{PathStreamable, PathSSE} {
		t.Run(path, func(t *testing.T) {
			heard := make(chan struct{}, 8)
			cs, err := sdkHTTPClientWith(t, hs.url, path, "first-token", "2025-11-25", &sdk.ClientOptions{
				ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { heard <- struct{}{} },
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := testContext(t)
			// A call makes the session known (and, on /mcp, lets the
			// client's listening stream open first).
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			for {
				hs.srv.SandboxesChanged()
				select {
				case <-heard:
					return
				case <-time.After(50 * time.Millisecond): // the listening stream may open after the first change
				case <-ctx.Done():
					t.Fatal("the HTTP client never heard that the sandboxes changed")
				}
			}
		})
	}
}
