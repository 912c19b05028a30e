package mcpserver

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestExecuteKernelsWaitAndJobs(t *testing.T) {
	exit0 := 0.0
	runToolCases(t, []toolCase{
		{
			name: "execute_code reset, wait_s and a restarted kernel",
			tool: "execute_code", args: map[string]any{"code": "print(1)", "reset": true, "wait_s": 10},
			setup: func(f *fakeBackend) {
				f.outcome = sandbox.ExecOutcome{SandboxID: "sb1", Result: sandbox.ExecResult{Stdout: "1\n", KernelRestarted: true}}
			},
			wantCall: fakeCall{Method: "ExecCode", Req: sandbox.CodeRequest{Code: "print(1)", Reset: true, Wait: 10 * time.Second}},
			want: map[string]any{"sandbox_id": "sb1", "stdout": "1\n", "stderr": "", "exit_code": exit0,
				"duration_ms": 0.0, "timed_out": false, "truncated": false, "kernel_restarted": true},
			wantText: []string{"[this ran in a fresh kernel"},
		},
		{
			name: "execute_command still running after wait_s continues as a job",
			tool: "execute_command", args: map[string]any{"command": "make", "wait_s": 1},
			setup: func(f *fakeBackend) {
				f.outcome = sandbox.ExecOutcome{SandboxID: "sb1", JobID: "job-9", NextOffset: 6,
					Result: sandbox.ExecResult{Stdout: "step1\n", Duration: time.Second}}
			},
			wantCall: fakeCall{Method: "ExecCommand", Req: sandbox.CommandRequest{Command: "make", Wait: time.Second}},
			want: map[string]any{"sandbox_id": "sb1", "stdout": "step1\n", "stderr": "", "job_id": "job-9", "next_offset": 6.0,
				"duration_ms": 1000.0, "timed_out": false, "truncated": false},
			wantText: []string{"step1\n[still running after 1s; it continues as background job job-9", `job_id "job-9" and since=6`},
		},
	})
}

func TestExecuteCodeReturnsImages(t *testing.T) {
	fake := newFake()
	png := []byte("\x89PNG fake")
	fake.outcome = sandbox.ExecOutcome{SandboxID: "sb1", Result: sandbox.ExecResult{Images: []sandbox.Image{
		{Path: "/workspace/outputs/a.png", MIME: "image/png", Size: int64(len(png)), Data: png},
		{Path: "/workspace/outputs/b.svg", MIME: "image/svg+xml", Size: 11, Data: []byte("<svg></svg>")},
		{Path: "/workspace/outputs/c.gif", MIME: "image/gif", Size: 5 << 20, Skipped: "larger than the 1048576-byte limit"},
	}}}
	c := mcpGoClient(t, serve(t, fake, Options{}))
	res := callMCPGo(t, c, "execute_code", map[string]any{"code": "plot()"})
	if len(res.Content) != 3 {
		t.Fatalf("content %+v; want the text, the PNG and the SVG", res.Content)
	}
	img, ok := res.Content[1].(mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || img.Data != base64.StdEncoding.EncodeToString(png) {
		t.Errorf("content[1] = %+v; want the PNG as image content", res.Content[1])
	}
	svg, ok := res.Content[2].(mcp.EmbeddedResource)
	if text, isText := svg.Resource.(mcp.TextResourceContents); !ok || !isText || text.Text != "<svg></svg>" || text.MIMEType != "image/svg+xml" {
		t.Errorf("content[2] = %+v; want the SVG as an embedded text resource", res.Content[2])
	}
	text := textOfResult(res)
	for _, want := range []string{"[image /workspace/outputs/a.png (image/png", "[image /workspace/outputs/c.gif (5 MiB) not included: larger than"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	images := structuredMap(t, res)["images"].([]any)
	if len(images) != 3 || images[2].(map[string]any)["skipped"] == nil {
		t.Errorf("structured images %v", images)
	}
}

// TestExecuteStreamsProgress: output the backend reports while it runs
// reaches a client that gave a progress token, and no one else.
func TestExecuteStreamsProgress(t *testing.T) {
	fake := newFake()
	var mu sync.Mutex
	var hadProgress []bool
	fake.onCode = func(_ context.Context, req sandbox.CodeRequest) {
		mu.Lock()
		hadProgress = append(hadProgress, req.Progress != nil)
		mu.Unlock()
		if req.Progress != nil {
			req.Progress(6, 0, "line 1\n")
			req.Progress(13, 0, "line 2\n")
		}
	}
	c := mcpGoClient(t, serve(t, fake, Options{}))
	var seen []progressSeen
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationProgress) {
			return
		}
		f := n.Params.AdditionalFields
		message, _ := f["message"].(string)
		mu.Lock()
		seen = append(seen, progressSeen{f["progressToken"], f["progress"].(float64), 0, message})
		mu.Unlock()
	})
	req := callRequest("execute_code", map[string]any{"code": "run()"})
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-9"}
	if _, err := c.CallTool(testContext(t), req); err != nil {
		t.Fatal(err)
	}
	callMCPGo(t, c, "execute_code", map[string]any{"code": "quiet()"})
	mu.Lock()
	defer mu.Unlock()
	want := []progressSeen{{"tok-9", 6, 0, "line 1\n"}, {"tok-9", 13, 0, "line 2\n"}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("progress notifications (-want +got):\n%s", diff)
	}
	if !cmp.Equal(hadProgress, []bool{true, false}) {
		t.Errorf("backend got a Progress: %v; want one only with a progress token", hadProgress)
	}
}
