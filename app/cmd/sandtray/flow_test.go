package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/test/dockertest"
)

// TestStdioUserFlow is the acceptance flow, as a new user's MCP
// client would run it against `sandtray serve --stdio`: create a sandbox, run
// Python, bash, node and C, move files both ways, stop and delete; bad input
// gets tool errors; and nothing is left behind when the client goes away.
func TestStdioUserFlow(t *testing.T) {
	image := dockertest.Image(t)
	env, root := userEnv(t, image)
	cmd := exec.Command(binary, "serve", "--stdio")
	cmd.Env = env
	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "flow-test", Version: "1.0"}, nil)
	session, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, s: session, ids: map[string]bool{}}
	t.Cleanup(func() {
		session.Close()
		for id := range c.ids {
			exec.Command("docker", "rm", "-f", id).Run()
		}
	})

	name := fmt.Sprintf("flow-%d", os.Getpid()) // sandbox names are the daemon's: unique per test run
	made := c.call("create_sandbox", map[string]any{"name": name})
	id := made["sandbox_id"].(string)
	c.ids[id] = true
	if made["workdir"] != "/workspace" || made["network"] != "none" || made["persistent"] != false {
		t.Errorf("create_sandbox: %v", made)
	}
	runs := []struct{ lang, code, want string }{
		{"python", "print(2**10)", "1024\n"},
		{"bash", "echo $((6*7))", "42\n"},
		{"javascript", "console.log('node', 1+1)", "node 2\n"},
		{"c", "#include <stdio.h>\nint main(){puts(\"from C\");}", "from C\n"},
	}
	for _, r := range runs {
		out := c.call("execute_code", map[string]any{"sandbox_id": name, "language": r.lang, "code": r.code})
		if out["stdout"] != r.want || out["exit_code"] != float64(0) {
			t.Errorf("%s: %v", r.lang, out)
		}
	}
	fileFlow(t, c, id, root, "out")

	bad := []struct {
		tool string
		args map[string]any
	}{
		{"execute_code", map[string]any{"sandbox_id": "nope", "code": "1"}},
		{"execute_code", map[string]any{"sandbox_id": id, "language": "cobol", "code": "1"}},
		{"copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": "/etc/passwd"}},
		{"write_file", map[string]any{"sandbox_id": id, "path": "big", "content": strings.Repeat("x", 20<<20)}},
	}
	for _, b := range bad {
		if res := c.try(b.tool, b.args); !res.IsError {
			t.Errorf("%s(%.60v) should be a tool error, got %s", b.tool, b.args, text(res))
		}
	}
	if out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "sleep 100", "timeout_s": 1}); out["timed_out"] != true {
		t.Errorf("a command that never ends: %v", out)
	}
	c.call("stop_sandbox", map[string]any{"sandbox_id": id})
	c.call("delete_sandbox", map[string]any{"sandbox_id": id})
	if containerExists(id) {
		t.Error("delete_sandbox left the container")
	}
	def := c.call("execute_code", map[string]any{"code": "print('default')"})
	defID := def["sandbox_id"].(string)
	if err := session.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if containerExists(defID) {
		t.Error("the session's ephemeral default sandbox outlived the server")
	}
}

// fileFlow is what a model does with files in sandbox id: a folder, a
// script written and run, read back and listed, and a host file copied in
// and the folder copied out again (to root/out, root being an allowed root).
func fileFlow(t *testing.T, c *client, id, root, out string) {
	t.Helper()
	c.call("make_directory", map[string]any{"sandbox_id": id, "path": "project"})
	c.call("write_file", map[string]any{"sandbox_id": id, "path": "project/main.py", "content": "print('hello from main.py')\n"})
	if out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "cd project && python3 main.py"}); out["stdout"] != "hello from main.py\n" {
		t.Errorf("run main.py: %v", out)
	}
	if out := c.call("read_file", map[string]any{"sandbox_id": id, "path": "project/main.py"}); out["content"] != "print('hello from main.py')\n" {
		t.Errorf("read_file: %v", out)
	}
	if res := c.try("list_files", map[string]any{"sandbox_id": id, "depth": 2}); !strings.Contains(text(res), "main.py") {
		t.Errorf("list_files tree: %s", text(res))
	}
	os.WriteFile(filepath.Join(root, out+".csv"), []byte("a,b\n1,2\n"), 0o644)
	c.call("copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": filepath.Join(root, out+".csv"), "path": "project/data.csv"})
	c.call("copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "project", "host_path": filepath.Join(root, out)})
	if b, err := os.ReadFile(filepath.Join(root, out, "data.csv")); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("round trip through the sandbox: %q, %v", b, err)
	}
}
