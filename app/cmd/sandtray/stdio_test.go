package main

import (
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

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testbuild"
	"github.com/sandtray/sandtray/test/dockertest"
)

// binary and shimBinary are the sandtray and sandtray-mcp commands, built
// once, side by side (the shim starts the sandtray next to it).
var binary, shimBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sandtray-bin-")
	if err != nil {
		panic(err)
	}
	binary, shimBinary = filepath.Join(dir, "sandtray"), filepath.Join(dir, "sandtray-mcp")
	if out, err := testbuild.Command(dir, ".", "../sandtray-mcp").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build sandtray: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// userEnv is a fresh user: its own home, config (default image, allowed host
// root) and state, so the test touches nothing of the real user's.
func userEnv(t *testing.T, image string) (env []string, root string) {
	t.Helper()
	home := t.TempDir()
	root = filepath.Join(home, "share")
	cfgDir := filepath.Join(home, ".config", "sandtray")
	os.MkdirAll(cfgDir, 0o700)
	os.MkdirAll(root, 0o700)
	cfg := fmt.Sprintf("default_image = %q\n[host]\nallowed_roots = [%q]\n", image, root)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	label := dockertest.Labels(t)[sandbox.LabelTest] // the engine under test keeps to it; cleanup removes it
	return append(os.Environ(), "SANDTRAY_TEST_LABEL="+label, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run")), root
}

type client struct {
	t   *testing.T
	s   *mcp.ClientSession
	ids map[string]bool // sandboxes seen, removed at cleanup whatever happens
}

func (c *client) call(name string, args map[string]any) map[string]any {
	c.t.Helper()
	res := c.try(name, args)
	if res.IsError {
		c.t.Fatalf("%s(%v): tool error %s", name, args, text(res))
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if id, ok := out["sandbox_id"].(string); ok {
		c.ids[id] = true
	}
	return out
}

func (c *client) try(name string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func containerExists(id string) bool {
	return exec.Command("docker", "inspect", "--type", "container", id).Run() == nil
}
