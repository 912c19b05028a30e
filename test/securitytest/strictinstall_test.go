package securitytest

import (
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestStrictProfileRefusesInstalls: install_packages in a strict sandbox
// (read-only root, no network) is refused with a sentence that says why and
// what to do, and the sandbox never goes online for it.
func TestStrictProfileRefusesInstalls(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Sandbox.Profile = config.ProfileStrict; c.Pool.Size = 0 })
	c := e.client
	id := c.sandbox(t, nil)
	c.refused(t, "install_packages", map[string]any{"sandbox_id": id, "packages": []string{"jq"}}, "strict", "sandbox.profile", "image")
	if nets := e.inspect(t, id)["NetworkSettings"].(map[string]any)["Networks"].(map[string]any); len(nets) != 1 || nets["none"] == nil {
		t.Errorf("the strict sandbox was put on a network for the refused install: %v", nets)
	}
	c.stillServes(t, id)
}
