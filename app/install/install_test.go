package install

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const shim = "/opt/sandtray/bin/sandtray-mcp"

// opts is Options for a fake home on Linux.
func opts(home string) Options {
	return Options{Home: home, ShimPath: shim, GOOS: "linux"}
}

// writeFile creates path (and its parents) with content and mode.
func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// readJSON decodes the file at path.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not valid JSON after install: %v\n%s", path, err, b)
	}
	return v
}

// An existing Cursor config with another server, an unrelated key, a user
// string with HTML characters and a big number that float64 would round.
const cursorConfig = `{
  "theme": "dark <b>&</b>",
  "mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"TOKEN": "x"}}
  },
  "counter": 12345678901234567890
}
`

func TestInstallKeepsEverythingElse(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, path, cursorConfig, 0o640)

	res, err := Install("cursor", opts(home))
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if res.Status != Added || res.Path != path {
		t.Errorf("result = %+v, want Added to %s", res, path)
	}
	got, _ := os.ReadFile(path)
	for _, keep := range []string{`"theme": "dark <b>&</b>"`, `12345678901234567890`, `"TOKEN": "x"`} {
		if !strings.Contains(string(got), keep) {
			t.Errorf("rewritten config lost %s:\n%s", keep, got)
		}
	}
	if strings.Index(string(got), `"theme"`) > strings.Index(string(got), `"counter"`) {
		t.Errorf("top-level key order changed:\n%s", got)
	}
	servers := readJSON(t, path)["mcpServers"].(map[string]any)
	wantEntry := map[string]any{"command": shim, "args": []any{}}
	if diff := cmp.Diff(wantEntry, servers["sandtray"]); diff != "" {
		t.Errorf("sandtray entry (-want +got):\n%s", diff)
	}
	if _, ok := servers["github"]; !ok {
		t.Error("the github server is gone")
	}
	if backup, _ := os.ReadFile(path + ".bak"); string(backup) != cursorConfig || res.Backup != path+".bak" {
		t.Errorf("backup %s = %q, want the original", res.Backup, backup)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want the original 0640", fi.Mode().Perm())
	}
}

func TestInstallTwiceIsIdempotent(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, path, cursorConfig, 0o600)
	if _, err := Install("cursor", opts(home)); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	before, _ := os.Stat(path)

	res, err := Install("cursor", opts(home))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Unchanged || !strings.Contains(res.String(), "already installed") {
		t.Errorf("second run: %v %q, want Unchanged / already installed", res.Status, res)
	}
	after, _ := os.Stat(path)
	second, _ := os.ReadFile(path)
	if string(first) != string(second) || !os.SameFile(before, after) {
		t.Error("second run rewrote the file")
	}
	if backup, _ := os.ReadFile(path + ".bak"); string(backup) != cursorConfig {
		t.Error("second run replaced the backup of the original")
	}
}

func TestInstallUpdatesStaleEntryKeepingUserKeys(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, path, `{"mcpServers":{"sandtray":{"command":"/old/sandtray-mcp","args":["-x"],"env":{"A":"1"}}}}`, 0o600)

	res, err := Install("cursor", opts(home))
	if err != nil || res.Status != Updated {
		t.Fatalf("Install = %v, %v; want Updated", res.Status, err)
	}
	entry := readJSON(t, path)["mcpServers"].(map[string]any)["sandtray"]
	want := map[string]any{"command": shim, "args": []any{}, "env": map[string]any{"A": "1"}}
	if diff := cmp.Diff(want, entry); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
}

func TestInstallNewConfig(t *testing.T) {
	home := t.TempDir()
	res, err := Install("claude", opts(home))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	if res.Status != Created || res.Path != path || res.Backup != "" {
		t.Errorf("result = %+v, want Created at %s with no backup", res, path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new config: %v, %v; want mode 0600", fi, err)
	}
	want := map[string]any{"mcpServers": map[string]any{"sandtray": map[string]any{"command": shim, "args": []any{}}}}
	if diff := cmp.Diff(want, readJSON(t, path)); diff != "" {
		t.Errorf("new config (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(path + ".bak"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a backup was written for a file that did not exist (%v)", err)
	}
}

func TestInstallMalformedConfigIsLeftAlone(t *testing.T) {
	tests := map[string]struct {
		content, want string
	}{
		"syntax error":    {"{\n  \"mcpServers\": {\n    \"a\": 1,\n  }\n}\n", "line 4, column 3"},
		"truncated":       {`{"mcpServers": {`, "line 1"},
		"comment (JSONC)": {"// mine\n{}", "line 1, column 1"},
		"not an object":   {`["mcpServers"]`, "not a JSON object"},
		"servers not map": {`{"mcpServers": []}`, `"mcpServers" is not a JSON object`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, ".cursor", "mcp.json")
			writeFile(t, path, tt.content, 0o600)

			_, err := Install("cursor", opts(home))
			if err == nil {
				t.Fatal("Install accepted a malformed config")
			}
			for _, want := range []string{path, tt.want, "not changed"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != tt.content {
				t.Errorf("file changed to %q", got)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("files left next to the config: %v", entries)
			}
		})
	}
}

func TestPrintWritesNothing(t *testing.T) {
	home := t.TempDir()
	o := opts(home)
	o.Print = true
	res, err := Install("vscode", o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Printed || !strings.Contains(res.String(), res.Path) {
		t.Errorf("result = %+v, %q", res, res)
	}
	var snippet map[string]any
	if err := json.Unmarshal([]byte(res.Snippet), &snippet); err != nil {
		t.Fatalf("snippet is not JSON: %v\n%s", err, res.Snippet)
	}
	want := map[string]any{"servers": map[string]any{"sandtray": map[string]any{
		"type": "stdio", "command": shim, "args": []any{}}}}
	if diff := cmp.Diff(want, snippet); diff != "" {
		t.Errorf("snippet (-want +got):\n%s", diff)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("--print created %v in home", entries)
	}
}
