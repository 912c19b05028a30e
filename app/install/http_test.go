package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInstallHTTPWritesTheURLForm(t *testing.T) {
	target := &HTTPTarget{URL: "http://127.0.0.1:8765/mcp", Token: "tok"}
	headers := map[string]any{"Authorization": "Bearer tok"}
	cases := []struct {
		client, file, key string
		want              map[string]any
	}{
		{"claude-code", ".claude.json", "mcpServers", map[string]any{"type": "http", "url": target.URL, "headers": headers}},
		{"cursor", ".cursor/mcp.json", "mcpServers", map[string]any{"url": target.URL, "headers": headers}},
		{"vscode", ".config/Code/User/mcp.json", "servers", map[string]any{"type": "http", "url": target.URL, "headers": headers}},
	}
	for _, c := range cases {
		t.Run(c.client, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, c.file)
			// A shim entry from an earlier install, with the user's own env.
			writeFile(t, path, `{"`+c.key+`": {"sandtray": {"command": "/old/sandtray-mcp", "args": [], "env": {"A": "1"}}}}`, 0o644)
			o := opts(home)
			o.HTTP = target
			if _, err := Install(c.client, o); err != nil {
				t.Fatal(err)
			}
			got := readJSON(t, path)[c.key].(map[string]any)["sandtray"]
			c.want["env"] = map[string]any{"A": "1"}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
			for _, f := range []string{path, path + ".bak"} {
				if info, err := os.Stat(f); err != nil || info.Mode().Perm()&0o077 != 0 {
					t.Errorf("%s holds the token but is readable by others: %v %v", f, info.Mode(), err)
				}
			}
			// And back to the shim: the URL form goes away.
			o.HTTP = nil
			if _, err := Install(c.client, o); err != nil {
				t.Fatal(err)
			}
			if e := readJSON(t, path)[c.key].(map[string]any)["sandtray"].(map[string]any); e["url"] != nil || e["headers"] != nil || e["command"] != shim {
				t.Errorf("after reinstalling the shim: %v", e)
			}
		})
	}
}

func TestInstallHTTPPrintAndRefusal(t *testing.T) {
	o := opts(t.TempDir())
	o.HTTP, o.Print = &HTTPTarget{URL: "http://localhost:1/mcp", Token: "tok"}, true
	res, err := Install("cursor", o)
	if err != nil || !strings.Contains(res.String(), `"url": "http://localhost:1/mcp"`) || !strings.Contains(res.String(), "Bearer tok") {
		t.Errorf("--print --http: %v\n%s", err, res)
	}
	o.Print = false
	if _, err := Install("claude", o); err == nil || !strings.Contains(err.Error(), "without --http") {
		t.Errorf("Claude Desktop takes no URLs; got %v", err)
	}
}
