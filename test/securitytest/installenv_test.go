package securitytest

import (
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestInstallIgnoresTheSandboxEnv: install_packages runs its package
// manager as root; a PATH or LD_*/PYTHON* variable the model gave the
// sandbox (create_sandbox env) must not choose what that root process runs.
// With a non-root sandbox user, the model's own code cannot run as root.
// (LD_* names are refused by create_sandbox itself since F35.)
func TestInstallIgnoresTheSandboxEnv(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Sandbox.User = "1000:1000"; c.Pool.Size = 0 })
	c := e.client
	id := c.sandbox(t, map[string]any{"env": map[string]any{
		"PATH":       "/workspace/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"PYTHONPATH": "/workspace/py",
	}})
	hijack := "#!/bin/sh\nid -u >> /tmp/ran-as-root\nexit 1\n"
	for _, name := range []string{"apt-get", "dpkg-query", "apt-cache", "dpkg"} {
		c.ok(t, "write_file", map[string]any{"sandbox_id": id, "path": "bin/" + name, "content": hijack, "mode": "0755"})
	}
	if out := c.command(t, id, "command -v apt-get; id -u", 10); !strings.HasPrefix(out.stdout, "/workspace/bin/apt-get\n1000") {
		t.Fatalf("the sandbox's PATH does not lead to the model's apt-get: %q", out.stdout)
	}
	r := c.call(t, "install_packages", map[string]any{"sandbox_id": id, "packages": []string{"jq"}, "manager": "apt"})
	t.Logf("install_packages: %s", r)
	if out := c.command(t, id, "cat /tmp/ran-as-root 2>/dev/null; true", 10); out.stdout != "" {
		t.Errorf("install_packages ran the model's program from the sandbox's PATH as uid %q", strings.TrimSpace(out.stdout))
	}
}
