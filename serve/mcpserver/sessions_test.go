package mcpserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// connectedClient is a client under test: a way to call execute_command and
// to disconnect.
type connectedClient struct {
	call  func(t *testing.T)
	close func()
}

func TestSessionOwnerAndLifecycleReachTheBackend(t *testing.T) {
	command := map[string]any{"command": "true"}
	clients := []struct {
		name       string
		wantClient string
		connect    func(t *testing.T, conn pipeConn) connectedClient
	}{
		{"mcp-go stateless protocol", "mcp-go-test 1.2.1", func(t *testing.T, conn pipeConn) connectedClient {
			c := mcpGoClient(t, conn)
			return connectedClient{func(t *testing.T) { callMCPGo(t, c, "execute_command", command) }, func() { c.Close() }}
		}},
		{"mcp-go initialize handshake", "mcp-go-test 1.2.1", func(t *testing.T, conn pipeConn) connectedClient {
			c := mcpGoClient(t, conn, client.WithLegacyProtocolOnly())
			return connectedClient{func(t *testing.T) { callMCPGo(t, c, "execute_command", command) }, func() { c.Close() }}
		}},
		{"go-sdk stateless protocol", "go-sdk-test 1.8.0", func(t *testing.T, conn pipeConn) connectedClient {
			cs := sdkClient(t, conn, "", nil)
			return connectedClient{func(t *testing.T) { callSDK(t, cs, "execute_command", command) }, func() { cs.Close() }}
		}},
		{"go-sdk initialize handshake", "go-sdk-test 1.8.0", func(t *testing.T, conn pipeConn) connectedClient {
			cs := sdkClient(t, conn, "2025-11-25", nil)
			return connectedClient{func(t *testing.T) { callSDK(t, cs, "execute_command", command) }, func() { cs.Close() }}
		}},
	}
	for _, tt := range clients {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			c := tt.connect(t, serve(t, fake, Options{}))
			c.call(t)
			c.call(t)

			owner := fake.lastCall().Owner
			if owner.Client != tt.wantClient || owner.Session == "" {
				t.Errorf("owner = %+v, want client %q and a session id", owner, tt.wantClient)
			}
			if diff := cmp.Diff([]sandbox.Owner{owner}, fake.sessionsStarted()); diff != "" {
				t.Errorf("SessionStarted calls (-want +got):\n%s", diff)
			}

			c.close()
			select {
			case ended := <-fake.endedCh:
				if ended != owner.Session {
					t.Errorf("SessionEnded(%q), want %q", ended, owner.Session)
				}
			case <-time.After(testTimeout):
				t.Fatal("SessionEnded was not called after the client disconnected")
			}
		})
	}
}

func TestEachConnectionIsItsOwnSession(t *testing.T) {
	fake := newFake()
	srv := New(fake, Options{})
	var owners []sandbox.Owner
	for range 2 {
		conn := serveWith(t, srv)
		c := mcpGoClient(t, conn)
		callMCPGo(t, c, "list_files", map[string]any{"sandbox_id": "a"})
		owners = append(owners, fake.lastCall().Owner)
	}
	if owners[0].Session == owners[1].Session {
		t.Errorf("two connections share session %q", owners[0].Session)
	}
}

func TestGoSDKClientSeesToolsAndStructuredResults(t *testing.T) {
	fake := newFake()
	fake.outcome = sandbox.ExecOutcome{SandboxID: "sb1", Result: sandbox.ExecResult{Stdout: "hi\n", Duration: time.Millisecond}}
	cs := sdkClient(t, serve(t, fake, Options{}), "", nil)

	list, err := cs.ListTools(testContext(t), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	schemas := make(map[string]any)
	for _, tool := range list.Tools {
		if tool.OutputSchema == nil || tool.InputSchema == nil {
			t.Errorf("%s lacks an input or output schema", tool.Name)
		}
		schemas[tool.Name] = tool.OutputSchema
	}
	if diff := cmp.Diff(allTools, slices.Sorted(mapsKeys(schemas))); diff != "" {
		t.Fatalf("go-sdk tools/list names (-want +got):\n%s", diff)
	}

	res := callSDK(t, cs, "execute_code", map[string]any{"code": "print('hi')"})
	if res.IsError {
		t.Fatalf("execute_code: tool error %v", res.Content)
	}
	checkSchema(t, "execute_code", schemas["execute_code"], res.StructuredContent)
	if text := res.Content[0].(*sdk.TextContent).Text; text != "hi\n[exit code 0 after 0.001s]" {
		t.Errorf("text part = %q", text)
	}

	res = callSDK(t, cs, "execute_code", map[string]any{"code": "x", "language": "rust"})
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "python, bash, sh, javascript, c") {
		t.Errorf("unknown language: isError=%v %q, want a tool error listing the languages", res.IsError, text)
	}
}

func callSDK(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// pullProgress reports an image pull, with a repeat that must be dropped.
func pullProgress(_ sandbox.Owner, p sandbox.Progress) {
	p(1, 3, "pulling python:3.12")
	p(1, 3, "repeat")
	p(2, 3, "")
	p(3, 3, "pulled")
}

// progressSeen is one notifications/progress a client received.
type progressSeen struct {
	Token    any
	Progress float64
	Total    float64
	Message  string
}

var wantProgress = []progressSeen{
	{"tok-1", 1, 3, "pulling python:3.12"},
	{"tok-1", 2, 3, ""},
	{"tok-1", 3, 3, "pulled"},
}

func TestCreateSandboxReportsProgressToMCPGo(t *testing.T) {
	fake := newFake()
	fake.onProgress = pullProgress
	c := mcpGoClient(t, serve(t, fake, Options{}))
	progress := watchProgress(c)
	req := callRequest("create_sandbox", nil)
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	if _, err := c.CallTool(testContext(t), req); err != nil {
		t.Fatal(err)
	}
	// The server writes a call's notifications before its result, and the
	// client handles them in order, so all have arrived by now.
	if diff := cmp.Diff(wantProgress, progress.take()); diff != "" {
		t.Errorf("progress notifications (-want +got):\n%s", diff)
	}

	// Without a token there is nobody to notify.
	callMCPGo(t, c, "create_sandbox", nil)
	if seen := progress.take(); len(seen) != 0 {
		t.Errorf("got %d progress notifications for a request without a progress token", len(seen))
	}
}

// progressLog records the progress notifications an mcp-go client receives.
type progressLog struct {
	mu   sync.Mutex
	seen []progressSeen
}

func watchProgress(c *client.Client) *progressLog {
	p := &progressLog{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationProgress) {
			return
		}
		f := n.Params.AdditionalFields
		total, _ := f["total"].(float64)
		message, _ := f["message"].(string)
		p.mu.Lock()
		p.seen = append(p.seen, progressSeen{f["progressToken"], f["progress"].(float64), total, message})
		p.mu.Unlock()
	})
	return p
}

// take returns what arrived since the last take.
func (p *progressLog) take() []progressSeen {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := p.seen
	p.seen = nil
	return seen
}

func TestCreateSandboxReportsProgressToGoSDK(t *testing.T) {
	fake := newFake()
	fake.onProgress = pullProgress
	got := make(chan progressSeen, 10)
	cs := sdkClient(t, serve(t, fake, Options{}), "", &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			p := req.Params
			got <- progressSeen{p.ProgressToken, p.Progress, p.Total, p.Message}
		},
	})
	params := &sdk.CallToolParams{Name: "create_sandbox"}
	params.SetProgressToken("tok-1")
	if _, err := cs.CallTool(testContext(t), params); err != nil {
		t.Fatal(err)
	}
	var seen []progressSeen
	for len(seen) < len(wantProgress) {
		select {
		case p := <-got:
			seen = append(seen, p)
		case <-time.After(testTimeout):
			t.Fatalf("got %d progress notifications, want %d: %+v", len(seen), len(wantProgress), seen)
		}
	}
	if diff := cmp.Diff(wantProgress, seen); diff != "" {
		t.Errorf("progress notifications (-want +got):\n%s", diff)
	}
}

func TestCancelledCallStopsItsBackendWorkWhileOthersRun(t *testing.T) {
	fake := newFake()
	running, stopped := make(chan struct{}), make(chan error, 1)
	fake.onExec = func(ctx context.Context, _ sandbox.Owner, _ sandbox.CommandRequest) sandbox.ExecOutcome {
		close(running)
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
		case <-time.After(testTimeout):
			stopped <- errors.New("the call's context was never cancelled")
		}
		return sandbox.ExecOutcome{}
	}
	c := mcpGoClient(t, serve(t, fake, Options{}))
	ctx, cancel := context.WithCancel(testContext(t))
	callDone := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, callRequest("execute_command", map[string]any{"command": "sleep 1000"}))
		callDone <- err
	}()
	<-running

	// Requests run concurrently: another call completes meanwhile.
	if res := callMCPGo(t, c, "list_sandboxes", nil); res.IsError {
		t.Errorf("list_sandboxes during a running call: %s", textOfResult(res))
	}

	cancel() // mcp-go's client sends notifications/cancelled
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("backend saw %v, want context.Canceled", err)
	}
	if err := <-callDone; err == nil {
		t.Error("the cancelled call returned no error")
	}
}
