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
	o.HTTP, o.Print = &HTTPTarget{URL: "http://127.0.0.1:1/mcp", Token: "tok"}, true
	res, err := Install("cursor", o)
	if err != nil || !strings.Contains(res.String(), `"url": "http://127.0.0.1:1/mcp"`) || !strings.Contains(res.String(), "Bearer tok") {
		t.Errorf("--print --http: %v\n%s", err, res)
	}
	o.Print = false
	if _, err := Install("claude", o); err == nil || !strings.Contains(err.Error(), "without --http") {
		t.Errorf("Claude Desktop takes no URLs; got %v", err)
	}
}

// TestInstallHTTPWritesAnAddressNotLocalhost (F36): a plain-HTTP URL on
// localhost is written as 127.0.0.1, where Sandtray listens: a client that
// resolves localhost to ::1 would otherwise send its token to whoever
// listens there while Sandtray is not running. HTTPS keeps its name.
func TestInstallHTTPWritesAnAddressNotLocalhost(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8765/mcp":        "http://127.0.0.1:8765/mcp",
		"http://LOCALHOST.:8765/mcp":       "http://127.0.0.1:8765/mcp",
		"http://localhost/mcp":             "http://127.0.0.1/mcp",
		"http://[::1]:8765/mcp":            "http://[::1]:8765/mcp",
		"https://localhost:8765/mcp":       "https://localhost:8765/mcp",
		"http://box.example.org:8765/mcp":  "http://box.example.org:8765/mcp",
		"http://localhost.example:8765/mc": "http://localhost.example:8765/mc",
	} {
		home := t.TempDir()
		o := opts(home)
		o.HTTP = &HTTPTarget{URL: in, Token: "tok"}
		if _, err := Install("cursor", o); err != nil {
			t.Fatal(err)
		}
		got := readJSON(t, filepath.Join(home, ".cursor/mcp.json"))["mcpServers"].(map[string]any)["sandtray"].(map[string]any)["url"]
		if got != want {
			t.Errorf("--url %s wrote %v, want %s", in, got, want)
		}
	}
}

// TestInstallHTTPThroughASymlinkWarns (F40): a config that is a symbolic
// link is written through (the link stays), and the result says where the
// token went, since a dotfile manager's target may be shared.
func TestInstallHTTPThroughASymlinkWarns(t *testing.T) {
	home := t.TempDir()
	target := filepath.Join(home, "dotfiles", "cursor-mcp.json")
	writeFile(t, target, `{"mcpServers": {}}`, 0o644)
	link := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	o := opts(home)
	o.HTTP = &HTTPTarget{URL: "http://127.0.0.1:8765/mcp", Token: "tok"}
	res, err := Install("cursor", o)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if e := readJSON(t, target)["mcpServers"].(map[string]any)["sandtray"]; e == nil {
		t.Error("the entry did not reach the link's target")
	}
	msg := res.String()
	if res.Target != target || !strings.Contains(msg, "Warning: "+link+" is a symbolic link") || !strings.Contains(msg, "written into "+target) {
		t.Errorf("no warning naming the link and its target:\n%s", msg)
	}
	// The shim's entry holds no secret: no warning.
	o.HTTP = nil
	if res, err := Install("cursor", o); err != nil || res.Target != "" || strings.Contains(res.String(), "Warning") {
		t.Errorf("shim install through the link: %v\n%s", err, res)
	}
}
