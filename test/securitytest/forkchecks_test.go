package securitytest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// forkOf forks sandbox id through fork_sandbox and returns the fork's id.
func (c *client) forkOf(t *testing.T, id string) string {
	t.Helper()
	r := c.ok(t, "fork_sandbox", map[string]any{"sandbox_id": id})
	forks, _ := r.data["sandboxes"].([]any)
	if len(forks) != 1 {
		t.Fatalf("fork_sandbox made %d sandboxes: %s", len(forks), r.text)
	}
	return forks[0].(map[string]any)["sandbox_id"].(string)
}

// sandboxCount is how many sandboxes list_sandboxes shows.
func (c *client) sandboxCount(t *testing.T) int {
	t.Helper()
	r := c.ok(t, "list_sandboxes", nil)
	list, _ := r.data["sandboxes"].([]any)
	return len(list)
}

// TestForkChecksTheConfigInForce (F60): a fork is a new sandbox, made
// under the config in force as create_sandbox would make it. A sandbox
// created on "bridge" while sandbox.allow_network was true, and one with
// 2048 MB of memory, are not forked once the user turned the network off
// and lowered limits.max_memory_mb; a fork made after the user chose the
// strict profile is strict, with its original's workdir on its tmpfs.
func TestForkChecksTheConfigInForce(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.Sandbox.AllowNetwork = true
		c.Pool.Size = 0
	})
	c := e.client
	bridged := c.sandbox(t, map[string]any{"network": "bridge"})
	big := c.sandbox(t, map[string]any{"memory_mb": 2048})
	plain := c.sandbox(t, nil)
	c.command(t, plain, "echo kept > keep.txt", 10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := e.eng.Config()
	cfg.Sandbox.AllowNetwork, cfg.Limits.MaxMemoryMB = false, 1024
	if _, err := e.eng.Reconfigure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Log(c.refused(t, "fork_sandbox", map[string]any{"sandbox_id": bridged}, "sandbox.allow_network").text)
	t.Log(c.refused(t, "fork_sandbox", map[string]any{"sandbox_id": big}, "limits.max_memory_mb").text)
	if n := c.sandboxCount(t); n != 3 {
		t.Errorf("%d sandboxes after two refused forks, want the 3 created", n)
	}

	cfg.Sandbox.Profile = config.ProfileStrict
	if _, err := e.eng.Reconfigure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	fork := c.forkOf(t, plain)
	doc := e.inspect(t, fork)
	host, _ := doc["HostConfig"].(map[string]any)
	if ro, _ := host["ReadonlyRootfs"].(bool); !ro {
		t.Errorf("a fork made under the strict profile has a writable root (HostConfig %v)", host)
	}
	if out := c.command(t, fork, "touch /etc/x 2>&1; cat keep.txt; id -u", 30); !strings.Contains(out.stdout, "Read-only file system") || !strings.HasSuffix(strings.TrimSpace(out.stdout), "kept\n1000") {
		t.Errorf("in a fork made under the strict profile: %q, want a read-only root, the workdir's file and uid 1000", out.stdout)
	}
}

// TestForkKeepsTheDenyRules (F61): the user denied an egress sandbox a
// host the config allows (the Debian mirror); its fork is denied it too,
// from its first connection.
func TestForkKeepsTheDenyRules(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Pool.Size = 0 })
	c := e.client
	parent := c.sandbox(t, map[string]any{"network": "egress"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.eng.AnswerEgressHost(ctx, parent, "deb.debian.org", sandbox.EgressDenySandbox); err != nil {
		t.Fatal(err)
	}
	const get = `python3 -c 'import urllib.request,urllib.error
try:
    print(urllib.request.urlopen("http://deb.debian.org/debian/",timeout=20).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("error",e)'`
	if out := c.command(t, parent, get, 60); strings.TrimSpace(out.stdout) != "403" {
		t.Fatalf("the parent reached a host the user denied it: %q", out.stdout)
	}
	fork := c.forkOf(t, parent)
	if out := c.command(t, fork, get, 60); strings.TrimSpace(out.stdout) != "403" {
		t.Errorf("the fork of a sandbox denied deb.debian.org got %q from it, want 403", out.stdout)
	}
	info, err := e.eng.Get(ctx, fork)
	if err != nil || len(info.EgressRules.Deny) != 1 {
		t.Errorf("the fork's rules: %+v %v, want the parent's deny", info.EgressRules, err)
	}
}
