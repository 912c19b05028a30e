package mcpserver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/mcpserver/tools"
)

// TestResourceListsMatchGoldenFiles keeps resources/list and
// resources/templates/list under review, as the tool schemas are.
func TestResourceListsMatchGoldenFiles(t *testing.T) {
	r := newRawSession(t, newFake(), Options{})
	var init struct {
		Result struct {
			Capabilities struct {
				Resources map[string]bool `json:"resources"`
			} `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.initialize(), &init); err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"subscribe": true, "listChanged": true}; !cmp.Equal(want, init.Result.Capabilities.Resources) {
		t.Errorf("resources capability = %v, want %v", init.Result.Capabilities.Resources, want)
	}
	for _, tt := range []struct{ method, field, golden string }{
		{"resources/list", "resources", "list.json"},
		{"resources/templates/list", "resourceTemplates", "templates.json"},
	} {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":%q}`, tt.method))
		var reply struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.receive(), &reply); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join("testdata", "resources", tt.golden), reply.Result[tt.field])
	}
}

func TestReadingResourcesGoesThroughTheBackend(t *testing.T) {
	exit0 := 0
	tests := []struct {
		name     string
		uri      string
		wantCall fakeCall
		want     string // JSON
	}{
		{"sandboxes", "sandtray://sandboxes", fakeCall{Method: "List"},
			`{"sandboxes":[{"id":"0123456789abcdef0123","name":"calm-otter","image":"python:3.12-slim","status":"running",
			"persistent":false,"owner":"claude-ai 0.1.0","created_at":"2025-03-01T12:00:00Z","cpu_percent":12.5,"memory_bytes":44040192,"ports":[],"network":"none"}]}`},
		{"logs by name", "sandtray://sandbox/calm-otter/logs", fakeCall{Method: "Logs", Ref: "calm-otter", Req: 0},
			`{"entries":[{"time":"2025-03-01T12:00:00Z","tool":"execute_command","input":"ls","exit_code":0,"duration_ms":20,"stdout":"a\n"}]}`},
		{"logs by id prefix", "sandtray://sandbox/0123456789ab/logs", fakeCall{Method: "Logs", Ref: "0123456789ab", Req: 0},
			`{"entries":[{"time":"2025-03-01T12:00:00Z","tool":"execute_command","input":"ls","exit_code":0,"duration_ms":20,"stdout":"a\n"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			fake.infos = []sandbox.Info{fake.info}
			fake.activity = []sandbox.Activity{{Time: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Tool: "execute_command",
				Input: "ls", ExitCode: &exit0, Duration: 20, Stdout: "a\n"}}
			c := mcpGoClient(t, serve(t, fake, Options{}))
			req := mcp.ReadResourceRequest{}
			req.Params.URI = tt.uri
			res, err := c.ReadResource(testContext(t), req)
			if err != nil {
				t.Fatalf("resources/read %s: %v", tt.uri, err)
			}
			if diff := cmp.Diff(tt.wantCall, fake.lastCall()); diff != "" {
				t.Errorf("backend call (-want +got):\n%s", diff)
			}
			if len(res.Contents) != 1 {
				t.Fatalf("got %d contents, want 1: %+v", len(res.Contents), res.Contents)
			}
			text, ok := res.Contents[0].(mcp.TextResourceContents)
			if !ok || text.URI != tt.uri || text.MIMEType != "application/json" {
				t.Fatalf("contents = %+v, want JSON text for %s", res.Contents[0], tt.uri)
			}
			var got, want any
			if err := json.Unmarshal([]byte(text.Text), &got); err != nil {
				t.Fatalf("contents %q are not JSON: %v", text.Text, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("contents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadingTheLogsOfAMissingSandboxSaysWhy(t *testing.T) {
	fake := newFake()
	fake.err = fmt.Errorf("no sandbox named %q; list_sandboxes shows them: %w", "gone", sandbox.ErrNotFound)
	cs := sdkClient(t, serve(t, fake, Options{}), "2025-11-25", nil)
	_, err := cs.ReadResource(testContext(t), &sdk.ReadResourceParams{URI: "sandtray://sandbox/gone/logs"})
	if err == nil || !strings.Contains(err.Error(), `no sandbox named "gone"`) {
		t.Errorf("resources/read of a missing sandbox: %v, want an error naming it", err)
	}
}

func TestOnlyTheSandboxesResourceTakesSubscriptions(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			srv := New(newFake(), Options{})
			cs := sdkClient(t, serveWith(t, srv), protocol, nil)
			if err := cs.Subscribe(testContext(t), &sdk.SubscribeParams{URI: tools.SandboxesURI}); err != nil {
				t.Fatalf("subscribe to %s: %v", tools.SandboxesURI, err)
			}
			if protocol != "2025-11-25" {
				return // a stateless client's subscription is a stream; its refusal arrives asynchronously
			}
			err := cs.Subscribe(testContext(t), &sdk.SubscribeParams{URI: "sandtray://sandbox/x/logs"})
			if err == nil || !strings.Contains(err.Error(), "only sandtray://sandboxes sends updates") {
				t.Errorf("subscribe to a logs resource: %v, want a refusal that says which resource sends updates", err)
			}
		})
	}
}
