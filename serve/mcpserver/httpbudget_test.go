package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/mcpserver/transport"
)

// heldExecs makes every execute_command of hs block until release is
// called, and reports each as it starts.
func heldExecs(hs *httpServer, capacity int) (started <-chan sandbox.Owner, release func()) {
	ch := make(chan sandbox.Owner, capacity)
	done := make(chan struct{})
	hs.fake.onExec = func(ctx context.Context, owner sandbox.Owner, _ sandbox.CommandRequest) sandbox.ExecOutcome {
		ch <- owner
		select {
		case <-done:
		case <-ctx.Done():
		}
		return sandbox.ExecOutcome{Result: sandbox.ExecResult{Stdout: "ok\n"}}
	}
	var once sync.Once
	return ch, func() { once.Do(func() { close(done) }) }
}

// TestHTTPStatelessClientsEachHaveABudget (F38): two clients of the
// stateless protocol (the official go-sdk client at 2026-07-28) each make 20
// calls at once, all 40 in flight together, and every call succeeds: the
// requests in flight are counted per client, not in one pool for every
// client that sends no Mcp-Session-Id.
func TestHTTPStatelessClientsEachHaveABudget(t *testing.T) {
	const perClient = 20
	hs := serveHTTP(t, Options{})
	started, release := heldExecs(hs, 2*perClient)
	defer release()
	ctx := testContext(t)
	type result struct {
		client string
		err    error
	}
	results := make(chan result, 2*perClient)
	for _, name := range []string{"client-a", "client-b"} {
		hc := &http.Client{Transport: bearer{token: "first-token"}}
		c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.url + PathStreamable, HTTPClient: hc, MaxRetries: -1},
			&sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
			t.Fatalf("negotiated %s, want 2026-07-28", got)
		}
		for range perClient {
			go func() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "sleep"}})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %v", res.Content)
				}
				results <- result{name, err}
			}()
		}
	}
	// Every call is in flight at once before any may finish; a call refused
	// meanwhile ends the wait.
	owners := map[string]int{}
	for n := 0; n < 2*perClient; {
		select {
		case o := <-started:
			owners[o.Client]++
			n++
		case r := <-results:
			t.Fatalf("%s: a call failed while %d of %d were in flight: %v", r.client, n, 2*perClient, r.err)
		case <-ctx.Done():
			t.Fatalf("only %d of %d calls started", n, 2*perClient)
		}
	}
	release()
	for range 2 * perClient {
		if r := <-results; r.err != nil {
			t.Errorf("%s: %v", r.client, r.err)
		}
	}
	if owners["client-a 1"] != perClient || owners["client-b 1"] != perClient {
		t.Errorf("calls per client owner: %v", owners)
	}
}

// statelessCall POSTs one tools/call of the stateless protocol as client
// name, shaped as the go-sdk sends it (headers and _meta), with extra
// headers; it returns the status, the Retry-After header and the body. A
// call that should be refused (refused) gives up after testTimeout, so a
// budget that lets it through fails the test instead of holding it.
func statelessCall(t *testing.T, hs *httpServer, name string, extra map[string]string, refused bool) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"` + name + `","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}},` +
		`"name":"execute_command","arguments":{"command":"sleep"}}}`
	ctx := context.Background()
	if refused {
		ctx = testContext(t)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.url+PathStreamable, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer first-token")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "execute_command")
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(text)
}

// TestHTTPStatelessFloodLeavesOthersTheirBudget (F38): a client of the
// stateless protocol flooding the endpoint is held to its own 32 requests in
// flight (more get 429 with Retry-After, whatever Mcp-Session-Id they make
// up), another client's calls still run meanwhile, and past the endpoint's
// total every client is told to retry.
func TestHTTPStatelessFloodLeavesOthersTheirBudget(t *testing.T) {
	hs := serveHTTP(t, Options{})
	started, release := heldExecs(hs, transport.MaxHTTPInFlight+1)
	defer release()
	var calls sync.WaitGroup
	defer calls.Wait()
	defer release()
	hold := func(client string, n int) {
		for range n {
			calls.Go(func() {
				if code, _, text := statelessCall(t, hs, client, nil, false); code != http.StatusOK {
					t.Errorf("%s: a call within the budget: %d %s", client, code, text)
				}
			})
		}
		for range n {
			select {
			case <-started:
			case <-time.After(testTimeout):
				t.Fatalf("%s: calls did not start", client)
			}
		}
	}
	hold("flood", transport.MaxInFlight)
	for _, extra := range []map[string]string{nil, {"Mcp-Session-Id": "made-up"}} {
		code, retry, text := statelessCall(t, hs, "flood", extra, true)
		if code != http.StatusTooManyRequests || retry == "" || !strings.Contains(text, "for this client") {
			t.Errorf("call %d of one client (headers %v): %d, Retry-After %q, %s; want 429 with Retry-After", transport.MaxInFlight+1, extra, code, retry, text)
		}
	}
	hold("calm", 1) // runs while the flood is at its limit
	hold("flood-2", transport.MaxInFlight)
	hold("flood-3", transport.MaxInFlight)
	hold("flood-4", transport.MaxInFlight-1)
	code, retry, text := statelessCall(t, hs, "late", nil, true)
	if code != http.StatusTooManyRequests || retry != "1" || !strings.Contains(text, "from all its HTTP clients") {
		t.Errorf("past the endpoint's %d in flight: %d, Retry-After %q, %s; want 429 naming the total", transport.MaxHTTPInFlight, code, retry, text)
	}
	release()
}
