package securitytest

import (
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestSandboxCap: one engine runs at most limits.max_sandboxes sandboxes,
// persistent ones included; the refusal names the key and says what to do,
// and deleting one makes room.
func TestSandboxCap(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Limits.MaxSandboxes = 3; c.Pool.Size = 0 })
	c := e.client
	first := c.sandbox(t, map[string]any{"persistent": true})
	c.sandbox(t, nil)
	c.sandbox(t, nil)
	c.refused(t, "create_sandbox", nil, "limits.max_sandboxes", "delete_sandbox")
	// The session's default sandbox is a sandbox too.
	c.refused(t, "execute_command", map[string]any{"command": "echo hi"}, "limits.max_sandboxes")
	if n := containersOf(t, e.labels); n != 3 {
		t.Errorf("%d sandboxes run, want the cap of 3", n)
	}
	c.ok(t, "delete_sandbox", map[string]any{"sandbox_id": first})
	c.sandbox(t, nil)
}
