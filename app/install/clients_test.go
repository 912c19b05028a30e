package install

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEveryClientPathAndShape(t *testing.T) {
	stdio := map[string]any{"type": "stdio", "command": shim, "args": []any{}}
	plain := map[string]any{"command": shim, "args": []any{}}
	appSupport := filepath.Join("Library", "Application Support")
	tests := []struct {
		client, goos, path, key string
		entry                   map[string]any
	}{
		{"claude", "linux", ".config/Claude/claude_desktop_config.json", "mcpServers", plain},
		{"claude", "darwin", appSupport + "/Claude/claude_desktop_config.json", "mcpServers", plain},
		{"claude-code", "linux", ".claude.json", "mcpServers", stdio},
		{"claude-code", "darwin", ".claude.json", "mcpServers", stdio},
		{"cursor", "linux", ".cursor/mcp.json", "mcpServers", plain},
		{"cursor", "darwin", ".cursor/mcp.json", "mcpServers", plain},
		{"vscode", "linux", ".config/Code/User/mcp.json", "servers", stdio},
		{"vscode", "darwin", appSupport + "/Code/User/mcp.json", "servers", stdio},
		{"claude", "windows", "AppData/Roaming/Claude/claude_desktop_config.json", "mcpServers", plain},
		{"vscode", "windows", "AppData/Roaming/Code/User/mcp.json", "servers", stdio},
	}
	for _, tt := range tests {
		t.Run(tt.client+"/"+tt.goos, func(t *testing.T) {
			home := t.TempDir()
			res, err := Install(tt.client, Options{Home: home, ShimPath: shim, GOOS: tt.goos})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(home, tt.path); res.Path != want {
				t.Errorf("path = %s, want %s", res.Path, want)
			}
			want := map[string]any{tt.key: map[string]any{"sandtray": tt.entry}}
			if diff := cmp.Diff(want, readJSON(t, res.Path)); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaudeCodeKeepsItsOtherState(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".claude.json")
	writeFile(t, path, `{"numStartups": 3, "projects": {"/src/x": {"mcpServers": {}}}, "userID": "abc"}`, 0o600)
	if _, err := Install("claude-code", opts(home)); err != nil {
		t.Fatal(err)
	}
	got := readJSON(t, path)
	if got["numStartups"] != 3.0 || got["userID"] != "abc" || got["projects"] == nil {
		t.Errorf("Claude Code state lost: %v", got)
	}
	project := got["projects"].(map[string]any)["/src/x"].(map[string]any)
	if len(project["mcpServers"].(map[string]any)) != 0 {
		t.Error("the entry went into a project's servers, want only the top-level mcpServers")
	}
}

func TestUnknownClientListsValidOnes(t *testing.T) {
	_, err := Install("emacs", opts(t.TempDir()))
	if !errors.Is(err, ErrUnknownClient) {
		t.Fatalf("err = %v, want ErrUnknownClient", err)
	}
	for _, name := range Clients() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %s", err, name)
		}
	}
	if want := []string{"claude", "claude-code", "cursor", "vscode"}; !slices.Equal(Clients(), want) {
		t.Errorf("Clients() = %v, want %v", Clients(), want)
	}
}

func TestRelativeShimPathRefused(t *testing.T) {
	o := opts(t.TempDir())
	o.ShimPath = "bin/sandtray-mcp"
	if _, err := Install("cursor", o); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("err = %v, want a refusal of the relative path", err)
	}
}

func TestUnsupportedOS(t *testing.T) {
	o := opts(t.TempDir())
	o.GOOS = "freebsd" // Windows is supported now
	if _, err := Install("claude", o); err == nil || !strings.Contains(err.Error(), "--print") {
		t.Errorf("err = %v, want advice to use --print", err)
	}
}

func TestSymlinkedConfigStaysALink(t *testing.T) {
	home := t.TempDir()
	target := filepath.Join(home, "dotfiles", "mcp.json")
	writeFile(t, target, `{"mcpServers": {}}`, 0o600)
	link := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Install("cursor", opts(home)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (%v)", link, err)
	}
	if _, ok := readJSON(t, target)["mcpServers"].(map[string]any)["sandtray"]; !ok {
		t.Error("the link's target did not get the entry")
	}
}

func TestXDGConfigHomeForTheRealHome(t *testing.T) {
	home, cfg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", cfg)
	res, err := Install("vscode", Options{ShimPath: shim, GOOS: "linux", Print: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cfg, "Code", "User", "mcp.json"); res.Path != want {
		t.Errorf("path = %s, want %s under XDG_CONFIG_HOME", res.Path, want)
	}
}

func TestDefaultShimPathFromPATH(t *testing.T) {
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "sandtray-mcp"), "#!/bin/sh\n", 0o755)
	t.Setenv("PATH", bin)
	got, err := DefaultShimPath()
	if err != nil || got != filepath.Join(bin, "sandtray-mcp") {
		t.Errorf("DefaultShimPath() = %q, %v", got, err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := DefaultShimPath(); err == nil {
		t.Error("DefaultShimPath found a shim that is not there")
	}
}
