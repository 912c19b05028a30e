package mcpserver

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// portArgs is what the fake records for ExposePort and UnexposePort.
type portArgs struct{ Port, HostPort int }

func (f *fakeBackend) ExposePort(ctx context.Context, owner sandbox.Owner, ref string, port, hostPort int) (sandbox.PortForward, error) {
	if err := f.record("ExposePort", owner, ref, portArgs{port, hostPort}); err != nil {
		return sandbox.PortForward{}, err
	}
	if hostPort == 0 {
		hostPort = 41234
	}
	return sandbox.PortForward{Port: port, HostPort: hostPort, URL: "http://127.0.0.1:" + strconv.Itoa(hostPort) + "/"}, nil
}

func (f *fakeBackend) UnexposePort(ctx context.Context, owner sandbox.Owner, ref string, port int) error {
	return f.record("UnexposePort", owner, ref, portArgs{Port: port})
}

func TestPortTools(t *testing.T) {
	runToolCases(t, []toolCase{
		{
			name: "expose_port picks a free host port",
			tool: "expose_port", args: map[string]any{"sandbox_id": "web", "port": 8000},
			wantCall: fakeCall{Method: "ExposePort", Ref: "web", Req: portArgs{8000, 0}},
			want:     map[string]any{"url": "http://127.0.0.1:41234/", "host_port": 41234.0, "port": 8000.0},
			wantText: []string{"http://127.0.0.1:41234/", "Give the user this URL"},
		},
		{
			name: "expose_port with a host port",
			tool: "expose_port", args: map[string]any{"sandbox_id": "web", "port": 8888, "host_port": 9000},
			wantCall: fakeCall{Method: "ExposePort", Ref: "web", Req: portArgs{8888, 9000}},
			want:     map[string]any{"url": "http://127.0.0.1:9000/", "host_port": 9000.0, "port": 8888.0},
		},
		{
			name: "unexpose_port",
			tool: "unexpose_port", args: map[string]any{"sandbox_id": "web", "port": 8000},
			wantCall: fakeCall{Method: "UnexposePort", Ref: "web", Req: portArgs{Port: 8000}},
			want:     map[string]any{"sandbox_id": "web", "port": 8000.0, "closed": true},
			wantText: []string{"no longer exposed"},
		},
		{
			name: "create_sandbox passes gpus given as a number",
			tool: "create_sandbox", args: map[string]any{"gpus": 2},
			wantCall: fakeCall{Method: "Create", Req: sandbox.CreateRequest{GPUs: "2"}},
			want: map[string]any{"sandbox_id": "0123456789abcdef0123", "name": "calm-otter", "image": "python:3.12-slim",
				"workdir": "/workspace", "persistent": false, "network": "none"},
		},
		{
			name: "list_sandboxes shows forwarded ports and GPUs",
			tool: "list_sandboxes",
			setup: func(f *fakeBackend) {
				info := f.info
				info.Spec.GPUs = "all"
				info.Ports = []sandbox.PortForward{{Port: 8000, HostPort: 41234, URL: "http://127.0.0.1:41234/"}}
				f.infos = []sandbox.Info{info}
			},
			wantCall: fakeCall{Method: "List"},
			want: map[string]any{"sandboxes": []any{map[string]any{
				"id": "0123456789abcdef0123", "name": "calm-otter", "image": "python:3.12-slim", "status": "running",
				"persistent": false, "owner": "claude-ai 0.1.0", "created_at": "2025-03-01T12:00:00Z",
				"cpu_percent": 12.5, "memory_bytes": float64(42 << 20), "gpus": "all", "network": "none",
				"ports": []any{map[string]any{"port": 8000.0, "host_port": 41234.0, "url": "http://127.0.0.1:41234/"}}}}},
			wantText: []string{"PORTS", "8000→http://127.0.0.1:41234/"},
		},
	})
}

func TestPortToolsRefuseBadPorts(t *testing.T) {
	fake := newFake()
	c := mcpGoClient(t, serve(t, fake, Options{}))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"expose_port", map[string]any{"sandbox_id": "web"}, `Missing required argument "port"`},
		{"expose_port", map[string]any{"sandbox_id": "web", "port": 70000}, "from 1 to 65535"},
		{"expose_port", map[string]any{"sandbox_id": "web", "port": 0}, "from 1 to 65535"},
		{"unexpose_port", map[string]any{"port": 80}, `Missing required argument "sandbox_id"`},
		{"create_sandbox", map[string]any{"gpus": 1.5}, `"gpus" must be "all" or a whole number`},
		{"request_network", map[string]any{"sandbox_id": "web", "hosts": []any{"pypi.org"}}, `Missing required argument "reason"`},
		{"request_network", map[string]any{"sandbox_id": "web", "hosts": []any{}, "reason": "x"}, `"hosts" must be a non-empty array`},
	} {
		res := callMCPGo(t, c, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(textOfResult(res), tc.want) {
			t.Errorf("%s %v: error %v, text %q; want a tool error saying %q", tc.tool, tc.args, res.IsError, textOfResult(res), tc.want)
		}
	}
	if n := fake.callCount(); n != 0 {
		t.Errorf("bad arguments reached the backend %d times", n)
	}
}
