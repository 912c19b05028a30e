package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/test/dockertest"
)

// socketEnv is userEnv plus a private socket path and no display, so the
// shim starts `sandtray serve`.
func socketEnv(t *testing.T, image string) []string {
	t.Helper()
	env, _ := userEnv(t, image)
	runDir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			kept = append(kept, kv)
		}
	}
	return append(kept, "SANDTRAY_SOCKET="+filepath.Join(runDir, "mcp.sock"))
}

// connectShim starts sandtray-mcp as an MCP client would and connects the
// independent go-sdk client to it on the given protocol version.
func connectShim(t *testing.T, env []string, name, protocol string, opts ...*mcp.ClientOptions) *client {
	t.Helper()
	cmd := exec.Command(shimBinary)
	cmd.Env, cmd.Dir = env, "/"
	cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, append(opts, nil)[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("%s: connect through the shim: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return &client{t: t, s: s, ids: map[string]bool{}}
}

// stopEngine ends the engine the shim started (it runs detached, in its own
// session) as a user's logout would: SIGTERM, so it removes ephemeral sandboxes.
func stopEngine(t *testing.T) {
	exec.Command("pkill", "-TERM", "-f", "^"+binary+" serve").Run()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && exec.Command("pgrep", "-f", "^"+binary+" serve").Run() == nil {
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClientsShareOneEngineThroughTheShim: the first client's shim starts the
// engine; a second client, on another protocol version, sees and uses the
// sandbox the first made; killing a third client's shim mid-exec kills that
// exec and the engine keeps serving the others.
func TestClientsShareOneEngineThroughTheShim(t *testing.T) {
	image := dockertest.Image(t)
	env := socketEnv(t, image)
	t.Cleanup(func() { stopEngine(t) })
	changed := make(chan struct{}, 16)
	a := connectShim(t, env, "client-a", "2025-11-25", &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	made := a.call("create_sandbox", map[string]any{"name": "shared", "persistent": true})
	id := made["sandbox_id"].(string)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })

	b := connectShim(t, env, "client-b", "2026-07-28")
	list := b.call("list_sandboxes", nil)
	boxes, _ := list["sandboxes"].([]any)
	if len(boxes) != 1 || boxes[0].(map[string]any)["name"] != "shared" {
		t.Fatalf("client B lists %v, want the sandbox client A made", list)
	}
	if owner := fmt.Sprint(boxes[0].(map[string]any)["owner"]); !strings.Contains(owner, "client-a") {
		t.Errorf("owner %s, want client-a", owner)
	}
	if out := b.call("execute_command", map[string]any{"sandbox_id": "shared", "command": "echo from B > b.txt && cat b.txt"}); out["stdout"] != "from B\n" {
		t.Errorf("client B in A's sandbox: %v", out)
	}
	if out := a.call("read_file", map[string]any{"sandbox_id": id, "path": "b.txt"}); out["content"] != "from B\n" {
		t.Errorf("client A reads B's file: %v", out)
	}

	killShimMidExec(t, env, id)
	if n := b.call("execute_command", map[string]any{"sandbox_id": id, "command": "ps -eo args | grep -c '^sleep 304' || true"}); n["stdout"] != "0\n" {
		t.Errorf("the killed client's exec still runs: %v", n)
	}
	for len(changed) > 0 {
		<-changed
	}
	b.call("delete_sandbox", map[string]any{"sandbox_id": id})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("client A was not told (resources list_changed) that B deleted a sandbox")
	}
}

// killShimMidExec starts a raw client whose shim is killed with SIGKILL while
// its `sleep 304` runs, and waits until the engine has killed that exec.
func killShimMidExec(t *testing.T, env []string, id string) {
	t.Helper()
	shim := exec.Command(shimBinary)
	shim.Env, shim.Dir = env, "/"
	in, _ := shim.StdinPipe()
	out, _ := shim.StdoutPipe()
	if err := shim.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	send := func(msg string) { fmt.Fprintln(in, msg) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"doomed","version":"1"}}}`)
	if !lines.Scan() {
		t.Fatal("no initialize reply through the shim")
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "execute_command", "arguments": map[string]any{"sandbox_id": id, "command": "sleep 304"}}})
	send(string(call))
	probe := connectShim(t, env, "probe", "2025-11-25")
	count := func() string {
		return probe.call("execute_command", map[string]any{"sandbox_id": id, "command": "ps -eo args | grep -c '^sleep 304' || true"})["stdout"].(string)
	}
	eventually(t, 10*time.Second, "the doomed exec never started", func() bool { return count() == "1\n" })
	shim.Process.Kill()
	shim.Wait()
	eventually(t, 10*time.Second, "the exec outlived its client", func() bool { return count() == "0\n" })
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Eventually(t, within, what, cond)
}
