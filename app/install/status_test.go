package install

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestInspectFollowsInstallAndUninstall(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700) // Claude Code is installed
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"sandtray": {"command": "/old/sandtray-mcp"}}}`, 0o600)
	writeFile(t, filepath.Join(home, ".config", "Code", "User", "mcp.json"), `{"servers": [}`, 0o600)
	writeFile(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
		`{"mcpServers": {"sandtray": {"url": "http://127.0.0.1:8765/mcp", "headers": {}}}}`, 0o600)

	want := []State{
		{Client: "claude", App: "Claude Desktop", Path: filepath.Join(home, ".config/Claude/claude_desktop_config.json"),
			Installed: true, Connected: true, URL: "http://127.0.0.1:8765/mcp", Current: true},
		{Client: "claude-code", App: "Claude Code", Path: filepath.Join(home, ".claude.json"), Installed: true},
		{Client: "cursor", App: "Cursor", Path: filepath.Join(home, ".cursor/mcp.json"), Installed: true,
			Connected: true, Command: "/old/sandtray-mcp"},
		{Client: "vscode", App: "VS Code", Path: filepath.Join(home, ".config/Code/User/mcp.json"), Installed: true},
	}
	got := Inspect(opts(home))
	if got[3].Err == nil {
		t.Error("a malformed VS Code config has no Err")
	}
	ignoreErr := cmpopts.IgnoreFields(State{}, "Err")
	if diff := cmp.Diff(want, got, ignoreErr); diff != "" {
		t.Errorf("before (-want +got):\n%s", diff)
	}

	if _, err := Install("claude-code", opts(home)); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall("cursor", opts(home)); err != nil {
		t.Fatal(err)
	}
	want[1].Connected, want[1].Command, want[1].Current = true, shim, true
	want[2].Connected, want[2].Command = false, ""
	if diff := cmp.Diff(want, Inspect(opts(home)), ignoreErr); diff != "" {
		t.Errorf("after (-want +got):\n%s", diff)
	}
}
