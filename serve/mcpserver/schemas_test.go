package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite testdata/tools/*.json from the current tool definitions")

// rawSession speaks JSON-RPC lines to a served connection, with no SDK in
// between, so tests see exactly what goes over the wire.
type rawSession struct {
	t      *testing.T
	server *Server
	conn   pipeConn
	in     *bufio.Scanner
}

func newRawSession(t *testing.T, fake *fakeBackend, opts Options) *rawSession {
	srv := newServer(fake, opts)
	conn := serveWith(t, srv)
	in := bufio.NewScanner(conn.PipeReader)
	in.Buffer(nil, 64<<20)
	return &rawSession{t: t, server: srv, conn: conn, in: in}
}

func (r *rawSession) send(line string) {
	r.t.Helper()
	if _, err := fmt.Fprintln(r.conn.PipeWriter, line); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

func (r *rawSession) receive() []byte {
	r.t.Helper()
	if !r.in.Scan() {
		r.t.Fatalf("no reply: %v", r.in.Err())
	}
	return r.in.Bytes()
}

// initialize does the initialize handshake and returns the server's reply.
func (r *rawSession) initialize() []byte {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}}`)
	reply := slices.Clone(r.receive())
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return reply
}

// TestToolSchemasMatchGoldenFiles keeps every tool's definition, as tools/list
// returns it, under review: a change to a name, argument, description, hint
// or output field shows up as a diff of testdata/tools/<name>.json.
func TestToolSchemasMatchGoldenFiles(t *testing.T) {
	r := newRawSession(t, newFake(), Options{})
	r.initialize()
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var reply struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.receive(), &reply); err != nil {
		t.Fatal(err)
	}
	if len(reply.Result.Tools) != len(allTools) {
		t.Errorf("tools/list returned %d tools, want %d", len(reply.Result.Tools), len(allTools))
	}
	for _, raw := range reply.Result.Tools {
		var tool struct{ Name string }
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join("testdata", "tools", tool.Name+".json"), raw)
	}
}

// checkGolden compares raw, indented, with the golden file at path, or
// rewrites the file under -update.
func checkGolden(t *testing.T, path string, raw json.RawMessage) {
	t.Helper()
	var got bytes.Buffer
	if err := json.Indent(&got, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (run go test ./serve/mcpserver -update)", err)
		return
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("%s differs (-want +got; run with -update if intended):\n%s", path, diff)
	}
}

// listTools returns the tools mcp-go's client sees, by name.
func listTools(t *testing.T, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	res, err := c.ListTools(testContext(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := make(map[string]mcp.Tool)
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return tools
}

// checkSchema fails unless instance (as JSON) is valid against schema.
func checkSchema(t *testing.T, what string, schema, instance any) {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatalf("%s: encode schema: %v", what, err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: decode schema %s: %v", what, raw, err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve schema: %v", what, err)
	}
	raw, _ = json.Marshal(instance)
	var generic any
	_ = json.Unmarshal(raw, &generic)
	if err := resolved.Validate(generic); err != nil {
		t.Errorf("%s: structured content %s does not match the output schema: %v", what, raw, err)
	}
}

func TestToolsListHasEveryToolWithSchemasAndHints(t *testing.T) {
	c := mcpGoClient(t, serve(t, newFake(), Options{}))
	tools := listTools(t, c)
	if diff := cmp.Diff(allTools, slices.Sorted(mapsKeys(tools))); diff != "" {
		t.Fatalf("tools/list names (-want +got):\n%s", diff)
	}
	readOnly := []string{"list_sandboxes", "read_file", "list_files", "diff_sandbox", "job_status", "sandbox_logs", "list_secrets", "list_snapshots"}
	destructive := []string{"delete_sandbox", "stop_sandbox", "job_stop", "write_file", "copy_to_sandbox", "copy_from_sandbox",
		"commit_sandbox", "export_dockerfile", "unexpose_port", "delete_snapshot", "restore_sandbox"}
	for name, tool := range tools {
		if tool.Description == "" || tool.OutputSchema.Type != "object" || len(tool.OutputSchema.Properties) == 0 {
			t.Errorf("%s: want a description and an object output schema, got %+v", name, tool)
		}
		if got, want := *tool.Annotations.ReadOnlyHint, slices.Contains(readOnly, name); got != want {
			t.Errorf("%s: readOnlyHint = %v, want %v", name, got, want)
		}
		if got, want := *tool.Annotations.DestructiveHint, slices.Contains(destructive, name); got != want {
			t.Errorf("%s: destructiveHint = %v, want %v", name, got, want)
		}
	}
	if got := tools["write_file"].InputSchema.Required; !slices.Equal(got, []string{"sandbox_id", "path", "content"}) {
		t.Errorf("write_file required = %v, want sandbox_id, path, content", got)
	}
	if got := tools["execute_code"].InputSchema.Required; !slices.Equal(got, []string{"code"}) {
		t.Errorf("execute_code required = %v, want only code (sandbox_id is optional)", got)
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
