package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

var allTools = []string{
	"commit_sandbox", "copy_from_sandbox", "copy_to_sandbox", "create_sandbox", "delete_sandbox", "delete_snapshot",
	"diff_sandbox", "execute_code", "execute_command", "export_dockerfile", "expose_port", "fork_sandbox",
	"install_packages", "job_status", "job_stop", "list_files", "list_sandboxes", "list_secrets", "list_snapshots",
	"make_directory", "persist_sandbox", "read_file", "request_network", "restore_sandbox", "sandbox_logs", "snapshot_sandbox",
	"stop_sandbox", "unexpose_port", "write_file",
}

// toolCase is one tool call through mcp-go's client and what it must do.
type toolCase struct {
	name     string
	tool     string
	args     map[string]any
	setup    func(*fakeBackend)
	wantCall fakeCall // Owner is checked elsewhere
	want     map[string]any
	wantText []string
}

func TestToolCallsReachBackendAndReturnStructuredResults(t *testing.T) {
	exit0, exit3 := 0, 3
	runToolCases(t, []toolCase{
		{
			name: "execute_code defaults to python and the session sandbox",
			tool: "execute_code", args: map[string]any{"code": "print(1)"},
			setup: func(f *fakeBackend) {
				f.outcome = sandbox.ExecOutcome{SandboxID: "sb1", Result: sandbox.ExecResult{Stdout: "1\n", Stderr: "warn\n", ExitCode: 0, Duration: 1500 * time.Millisecond}}
			},
			wantCall: fakeCall{Method: "ExecCode", Req: sandbox.CodeRequest{Code: "print(1)"}},
			want: map[string]any{"sandbox_id": "sb1", "stdout": "1\n", "stderr": "warn\n", "exit_code": 0.0,
				"duration_ms": 1500.0, "timed_out": false, "truncated": false},
			wantText: []string{"1\n[stderr]\nwarn\n[exit code 0 after 1.5s]"},
		},
		{
			name: "execute_code language alias, timeout and background",
			tool: "execute_code", args: map[string]any{"code": "x", "language": "node", "sandbox_id": "web", "timeout_s": 2.5, "background": true},
			setup: func(f *fakeBackend) { f.outcome = sandbox.ExecOutcome{SandboxID: "sb1", JobID: "job-7"} },
			wantCall: fakeCall{Method: "ExecCode", Ref: "web",
				Req: sandbox.CodeRequest{Code: "x", Language: "javascript", Timeout: 2500 * time.Millisecond, Background: true}},
			want: map[string]any{"sandbox_id": "sb1", "stdout": "", "stderr": "", "job_id": "job-7",
				"duration_ms": 0.0, "timed_out": false, "truncated": false},
			wantText: []string{"Started background job job-7", "job_status"},
		},
		{
			name: "execute_command passes every argument",
			tool: "execute_command",
			args: map[string]any{"command": "make test", "workdir": "src", "env": map[string]any{"A": "1"}, "stdin": "in", "timeout_s": 1},
			setup: func(f *fakeBackend) {
				f.outcome = sandbox.ExecOutcome{SandboxID: "sb1", Result: sandbox.ExecResult{ExitCode: 124, TimedOut: true, Duration: time.Second, Truncated: true}}
			},
			wantCall: fakeCall{Method: "ExecCommand",
				Req: sandbox.CommandRequest{Command: "make test", Workdir: "src", Env: map[string]string{"A": "1"}, Stdin: "in", Timeout: time.Second}},
			want: map[string]any{"sandbox_id": "sb1", "stdout": "", "stderr": "", "exit_code": 124.0,
				"duration_ms": 1000.0, "timed_out": true, "truncated": true},
			wantText: []string{"(no output)", "[timed out after 1s", "[output truncated"},
		},
		{
			name: "create_sandbox",
			tool: "create_sandbox",
			args: map[string]any{"image": "alpine", "language": "python3", "name": "web", "persistent": true,
				"network": "bridge", "memory_mb": 512, "cpus": 1.5, "env": map[string]any{"K": "v"}},
			wantCall: fakeCall{Method: "Create", Req: sandbox.CreateRequest{Image: "alpine", Language: "python", Name: "web",
				Persistent: true, Network: "bridge", MemoryMB: 512, CPUs: 1.5, Env: map[string]string{"K": "v"}}},
			want: map[string]any{"sandbox_id": "0123456789abcdef0123", "name": "calm-otter", "image": "python:3.12-slim",
				"workdir": "/workspace", "persistent": false, "network": "none"},
			wantText: []string{`Created sandbox "calm-otter" (id 0123456789ab)`},
		},
		{
			name:     "list_sandboxes",
			tool:     "list_sandboxes",
			setup:    func(f *fakeBackend) { f.infos = []sandbox.Info{f.info} },
			wantCall: fakeCall{Method: "List"},
			want: map[string]any{"sandboxes": []any{map[string]any{
				"id": "0123456789abcdef0123", "name": "calm-otter", "image": "python:3.12-slim", "status": "running",
				"persistent": false, "owner": "claude-ai 0.1.0", "created_at": "2025-03-01T12:00:00Z",
				"cpu_percent": 12.5, "memory_bytes": float64(42 << 20), "ports": []any{}, "network": "none"}}},
			wantText: []string{"ID", "calm-otter", "claude-ai 0.1.0", "12.5%", "42 MiB"},
		},
		{
			name:     "list_sandboxes when there are none",
			tool:     "list_sandboxes",
			wantCall: fakeCall{Method: "List"},
			want:     map[string]any{"sandboxes": []any{}},
			wantText: []string{"No sandboxes"},
		},
		{
			name: "write_file utf8 with mode",
			tool: "write_file", args: map[string]any{"sandbox_id": "web", "path": "run.sh", "content": "echo hi\n", "mode": "0755"},
			wantCall: fakeCall{Method: "WriteFile", Ref: "web", Req: sandbox.WriteRequest{Path: "run.sh", Data: []byte("echo hi\n"), Mode: 0o755}},
			want:     map[string]any{"path": "/workspace/run.sh", "size": 8.0},
			wantText: []string{"Wrote 8 B to /workspace/run.sh"},
		},
		{
			name: "write_file base64, wrapped and unpadded",
			tool: "write_file", args: map[string]any{"sandbox_id": "web", "path": "b.bin", "content": "AAEC\n/w", "encoding": "base64"},
			wantCall: fakeCall{Method: "WriteFile", Ref: "web", Req: sandbox.WriteRequest{Path: "b.bin", Data: []byte{0, 1, 2, 255}}},
			want:     map[string]any{"path": "/workspace/b.bin", "size": 4.0},
		},
		{
			name: "read_file utf8 cut inside a character",
			tool: "read_file", args: map[string]any{"sandbox_id": "web", "path": "a.txt", "offset": 10, "limit": 4},
			setup: func(f *fakeBackend) {
				f.file = sandbox.FileContent{Path: "/workspace/a.txt", Data: []byte("abc\xc3"), Size: 100, Truncated: true}
			},
			wantCall: fakeCall{Method: "ReadFile", Ref: "web", Req: readArgs{"a.txt", 10, 4}},
			want: map[string]any{"path": "/workspace/a.txt", "content": "abc", "encoding": "utf8", "size": 100.0,
				"offset": 10.0, "length": 3.0, "truncated": true},
			wantText: []string{"abc\n[showing bytes 10-13 of 100; read on with offset 13]"},
		},
		{
			name: "read_file base64",
			tool: "read_file", args: map[string]any{"sandbox_id": "web", "path": "b.bin", "encoding": "base64"},
			setup: func(f *fakeBackend) {
				f.file = sandbox.FileContent{Path: "/workspace/b.bin", Data: []byte{0, 255}, Size: 2}
			},
			wantCall: fakeCall{Method: "ReadFile", Ref: "web", Req: readArgs{"b.bin", 0, 0}},
			want: map[string]any{"path": "/workspace/b.bin", "content": "AP8=", "encoding": "base64", "size": 2.0,
				"offset": 0.0, "length": 2.0, "truncated": false},
			wantText: []string{"AP8="},
		},
		{
			name: "list_files depth 2 draws a tree",
			tool: "list_files", args: map[string]any{"sandbox_id": "web", "depth": 2, "all": true},
			setup: func(f *fakeBackend) {
				f.listing = sandbox.Listing{Path: "/workspace", Entries: []sandbox.FileEntry{
					{Path: "main.py", Type: "file", Size: 10, Mode: "0644"},
					{Path: "src", Type: "dir", Mode: "0755"},
					{Path: "src/util.py", Type: "file", Size: 3, Mode: "0644"},
				}}
			},
			wantCall: fakeCall{Method: "ListFiles", Ref: "web", Req: listArgs{"", 2, true}},
			want: map[string]any{"path": "/workspace", "entries": []any{
				map[string]any{"path": "main.py", "type": "file", "size": 10.0, "mode": "0644", "mod_time": "0001-01-01T00:00:00Z"},
				map[string]any{"path": "src", "type": "dir", "size": 0.0, "mode": "0755", "mod_time": "0001-01-01T00:00:00Z"},
				map[string]any{"path": "src/util.py", "type": "file", "size": 3.0, "mode": "0644", "mod_time": "0001-01-01T00:00:00Z"},
			}, "tree": "/workspace\n├── main.py\n└── src/\n    └── util.py\n\n1 directory, 2 files"},
			wantText: []string{"└── src/\n    └── util.py"},
		},
		{
			name: "make_directory",
			tool: "make_directory", args: map[string]any{"sandbox_id": "web", "path": "a/b"},
			wantCall: fakeCall{Method: "MakeDirectory", Ref: "web", Req: "a/b"},
			want:     map[string]any{"path": "/workspace/a/b"},
		},
		{
			name: "copy_to_sandbox",
			tool: "copy_to_sandbox", args: map[string]any{"sandbox_id": "web", "host_path": "/home/u/data"},
			setup: func(f *fakeBackend) {
				f.copied = sandbox.CopyResult{Path: "/workspace/data", Files: 2, Bytes: 2048, Skipped: []string{"link: symlink"}}
			},
			wantCall: fakeCall{Method: "CopyToSandbox", Ref: "web", Req: copyArgs{"/home/u/data", ""}},
			want:     map[string]any{"path": "/workspace/data", "files": 2.0, "bytes": 2048.0, "skipped": []any{"link: symlink"}},
			wantText: []string{"Copied 2 files (2 KiB) to /workspace/data", "link: symlink"},
		},
		{
			name: "copy_from_sandbox",
			tool: "copy_from_sandbox", args: map[string]any{"sandbox_id": "web", "path": "out.csv", "host_path": "/home/u/out.csv"},
			setup:    func(f *fakeBackend) { f.copied = sandbox.CopyResult{Path: "/home/u/out.csv", Files: 1, Bytes: 5} },
			wantCall: fakeCall{Method: "CopyFromSandbox", Ref: "web", Req: copyArgs{"out.csv", "/home/u/out.csv"}},
			want:     map[string]any{"path": "/home/u/out.csv", "files": 1.0, "bytes": 5.0},
		},
		{
			name: "persist_sandbox defaults to persistent",
			tool: "persist_sandbox", args: map[string]any{"sandbox_id": "web"},
			wantCall: fakeCall{Method: "SetPersistent", Ref: "web", Req: true},
			want:     map[string]any{"sandbox_id": "0123456789abcdef0123", "name": "calm-otter", "status": "running", "persistent": true},
			wantText: []string{"now persistent"},
		},
		{
			name: "diff_sandbox",
			tool: "diff_sandbox", args: map[string]any{"sandbox_id": "web", "path": "/etc"},
			setup:    func(f *fakeBackend) { f.diff = sandbox.Diff{Added: []string{"/etc/a"}, Deleted: []string{"/etc/b"}} },
			wantCall: fakeCall{Method: "Diff", Ref: "web", Req: "/etc"},
			want:     map[string]any{"added": []any{"/etc/a"}, "changed": []any{}, "deleted": []any{"/etc/b"}},
			wantText: []string{"A /etc/a\nD /etc/b"},
		},
		{
			name: "job_status",
			tool: "job_status", args: map[string]any{"job_id": "job-7", "since": 5},
			setup: func(f *fakeBackend) {
				f.job = sandbox.JobStatus{ID: "job-7", SandboxID: "sb1", Status: sandbox.JobExited, Output: "done\n",
					NextOffset: 10, ExitCode: &exit3, Duration: 2 * time.Second}
			},
			wantCall: fakeCall{Method: "JobStatus", Ref: "job-7", Req: int64(5)},
			want: map[string]any{"job_id": "job-7", "sandbox_id": "sb1", "status": "exited", "output": "done\n",
				"next_offset": 10.0, "exit_code": 3.0, "duration_ms": 2000.0},
			wantText: []string{"done\n[job job-7 exited with code 3 after 2s]"},
		},
		{
			name: "job_status with dropped output",
			tool: "job_status", args: map[string]any{"job_id": "job-7", "since": 5},
			setup: func(f *fakeBackend) {
				f.job = sandbox.JobStatus{ID: "job-7", SandboxID: "sb1", Status: sandbox.JobRunning, Output: "abc",
					NextOffset: 900, OutputDropped: "892 bytes of output between offsets 8 and 900 were dropped: why", Duration: time.Second}
			},
			wantCall: fakeCall{Method: "JobStatus", Ref: "job-7", Req: int64(5)},
			want: map[string]any{"job_id": "job-7", "sandbox_id": "sb1", "status": "running", "output": "abc",
				"next_offset": 900.0, "output_dropped": "892 bytes of output between offsets 8 and 900 were dropped: why", "duration_ms": 1000.0},
			wantText: []string{"abc\n[892 bytes of output between offsets 8 and 900 were dropped: why]\n[job job-7 running for 1s; call job_status with since=900"},
		},
		{
			name: "job_stop",
			tool: "job_stop", args: map[string]any{"job_id": "job-7"},
			setup: func(f *fakeBackend) {
				f.job = sandbox.JobStatus{ID: "job-7", SandboxID: "sb1", Status: sandbox.JobStopped, Duration: time.Second}
			},
			wantCall: fakeCall{Method: "JobStop", Ref: "job-7"},
			want: map[string]any{"job_id": "job-7", "sandbox_id": "sb1", "status": "stopped", "output": "",
				"next_offset": 0.0, "duration_ms": 1000.0},
			wantText: []string{"[job job-7 stopped after 1s]"},
		},
		{
			name: "job_status of a job a restore ended says so",
			tool: "job_status", args: map[string]any{"job_id": "job-8"},
			setup: func(f *fakeBackend) {
				f.job = sandbox.JobStatus{ID: "job-8", SandboxID: "sb1", Status: sandbox.JobStopped, Duration: time.Second,
					Error: "ended by restore_sandbox (snapshot 0123456789ab)"}
			},
			wantCall: fakeCall{Method: "JobStatus", Ref: "job-8", Req: int64(0)},
			want: map[string]any{"job_id": "job-8", "sandbox_id": "sb1", "status": "stopped", "output": "",
				"next_offset": 0.0, "duration_ms": 1000.0, "error": "ended by restore_sandbox (snapshot 0123456789ab)"},
			wantText: []string{"[job job-8 stopped after 1s: ended by restore_sandbox (snapshot 0123456789ab)]"},
		},
		{
			name: "sandbox_logs defaults to the last 20 (and asks for one more, to know whether older ones exist)",
			tool: "sandbox_logs", args: map[string]any{"sandbox_id": "web"},
			setup: func(f *fakeBackend) {
				f.activity = []sandbox.Activity{{Time: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Tool: "execute_command",
					Client: "claude-ai 0.1.0", Input: "ls", ExitCode: &exit0, Duration: 20, Stdout: "a\n"}}
			},
			wantCall: fakeCall{Method: "Logs", Ref: "web", Req: 21},
			want: map[string]any{"entries": []any{map[string]any{"time": "2025-03-01T12:00:00Z", "tool": "execute_command",
				"client": "claude-ai 0.1.0", "input": "ls", "exit_code": 0.0, "duration_ms": 20.0, "stdout": "a\n"}}},
			wantText: []string{"2025-03-01T12:00:00Z execute_command by claude-ai 0.1.0: exit code 0 (0.02s)\n[input]\nls\n[stdout]\na"},
		},
		{
			name: "stop_sandbox",
			tool: "stop_sandbox", args: map[string]any{"sandbox_id": "web"},
			setup:    func(f *fakeBackend) { f.info.Status = sandbox.StatusStopped },
			wantCall: fakeCall{Method: "Stop", Ref: "web"},
			want:     map[string]any{"sandbox_id": "0123456789abcdef0123", "name": "calm-otter", "status": "stopped", "persistent": false},
		},
		{
			name: "delete_sandbox",
			tool: "delete_sandbox", args: map[string]any{"sandbox_id": "web"},
			wantCall: fakeCall{Method: "Delete", Ref: "web"},
			want:     map[string]any{"sandbox_id": "web", "deleted": true},
		},
	})
}

// runToolCases checks each call's backend call, structured result (also
// against the tool's output schema) and text.
func runToolCases(t *testing.T, tests []toolCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			if tt.setup != nil {
				tt.setup(fake)
			}
			c := mcpGoClient(t, serve(t, fake, Options{}))
			tools := listTools(t, c)
			res := callMCPGo(t, c, tt.tool, tt.args)
			if res.IsError {
				t.Fatalf("%s returned a tool error: %s", tt.tool, textOfResult(res))
			}
			got := fake.lastCall()
			got.Owner = sandbox.Owner{}
			if diff := cmp.Diff(tt.wantCall, got); diff != "" {
				t.Errorf("backend call (-want +got):\n%s", diff)
			}
			structured := structuredMap(t, res)
			if diff := cmp.Diff(tt.want, structured); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
			checkSchema(t, tt.tool, tools[tt.tool].OutputSchema, structured)
			text := textOfResult(res)
			for _, want := range tt.wantText {
				if !strings.Contains(text, want) {
					t.Errorf("text part lacks %q:\n%s", want, text)
				}
			}
		})
	}
}
