package securitytest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// strictEnv is an engine whose sandboxes use the strict profile.
func strictEnv(t *testing.T) *env {
	return newEnv(t, func(c *config.Config) { c.Sandbox.Profile = config.ProfileStrict; c.Sandbox.TmpfsMB = 64 })
}

// TestStrictProfile (F17): sandbox.profile = "strict" gives a read-only
// root, size-limited tmpfs for the workdir and /tmp, a non-root user and no
// network, and the tools a model uses on files still work there.
func TestStrictProfile(t *testing.T) {
	e := strictEnv(t)
	id := e.client.sandbox(t, nil)
	doc := cisDoc{e.inspect(t, id)}
	if doc.get("HostConfig.ReadonlyRootfs") != true {
		t.Errorf("HostConfig.ReadonlyRootfs = %v, want true", doc.get("HostConfig.ReadonlyRootfs"))
	}
	tmpfs, _ := doc.get("HostConfig.Tmpfs").(map[string]any)
	if !strings.Contains(tmpfs["/workspace"].(string)+tmpfs["/tmp"].(string), "size=64m") {
		t.Errorf("HostConfig.Tmpfs = %v, want /workspace and /tmp of 64 MB", tmpfs)
	}
	if u := doc.str("Config.User"); isRootUser(u) || doc.str("HostConfig.NetworkMode") != "none" {
		t.Errorf("Config.User %q, NetworkMode %q; want a user that is not root and none", u, doc.str("HostConfig.NetworkMode"))
	}

	var profile any
	for _, s := range e.client.ok(t, "list_sandboxes", map[string]any{}).data["sandboxes"].([]any) {
		if s := s.(map[string]any); s["id"] == id {
			profile = s["profile"]
		}
	}
	if profile != "strict" {
		t.Errorf("list_sandboxes gives the sandbox profile %v, want strict", profile)
	}

	out := e.client.command(t, id, `id -u; touch /etc/x 2>&1; touch /usr/local/bin/x 2>&1; echo ok > note && cat note; df -m /workspace | tail -1`, 10)
	for _, want := range []string{"1000\n", "Read-only file system", "ok\n", " 64 "} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("inside a strict sandbox: want %q in\n%s", want, out.stdout)
		}
	}
	if c := e.client.code(t, id, "python", "import os; print(os.getcwd(), 6*7)", 20); strings.TrimSpace(c.stdout) != "/workspace 42" {
		t.Errorf("execute_code in a strict sandbox: %v", c.result)
	}
	e.client.ok(t, "write_file", map[string]any{"sandbox_id": id, "path": "data/in.txt", "content": "hello\n"})
	if r := e.client.ok(t, "read_file", map[string]any{"sandbox_id": id, "path": "data/in.txt"}); r.str("content") != "hello\n" {
		t.Errorf("read_file of what write_file wrote: %q", r.str("content"))
	}
	if r := e.client.ok(t, "list_files", map[string]any{"sandbox_id": id, "path": "data"}); !strings.Contains(r.text, "in.txt") {
		t.Errorf("list_files in a strict sandbox: %s", r.text)
	}
	host := filepath.Join(e.root, "out")
	e.client.ok(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "data", "host_path": host})
	if b, err := os.ReadFile(filepath.Join(host, "in.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("copy_from_sandbox of a strict sandbox's workdir: %q, %v", b, err)
	}
	e.client.ok(t, "copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": host, "path": "back"})
	if out := e.client.command(t, id, `stat -c '%u %n' back/in.txt`, 10); out.stdout != "1000 back/in.txt\n" {
		t.Errorf("copy_to_sandbox into a strict sandbox: %q", out.stdout)
	}
	e.client.refused(t, "create_sandbox", map[string]any{"network": "bridge"}, "strict", "network")
	if !slices.Contains([]string{"none"}, doc.str("HostConfig.NetworkMode")) {
		t.Errorf("NetworkMode %q", doc.str("HostConfig.NetworkMode"))
	}
}
