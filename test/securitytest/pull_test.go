package securitytest

import (
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestPullPolicy (F13): create_sandbox's image makes the daemon pull only
// from the registries the user allows (pull.registries, Docker Hub by
// default), never under pull.policy = "never", and never when the user's
// config forbids the network: a registry name can carry data out through
// DNS, and a huge image can fill the disk.
func TestPullPolicy(t *testing.T) {
	e := newEnv(t)
	e.client.refused(t, "create_sandbox", map[string]any{"image": "c2VjcmV0.exfil.example.com/data:1"},
		"c2VjcmV0.exfil.example.com", "pull.registries", "docker.io")

	never := newEnv(t, func(c *config.Config) { c.Pull.Policy = config.PullNever; c.Pool.Size = 0 })
	never.client.refused(t, "create_sandbox", map[string]any{"image": "python:3.12-sandtray-absent"}, "pull.policy")

	offline := newEnv(t, func(c *config.Config) { c.Sandbox.AllowNetwork = false; c.Pool.Size = 0 })
	offline.client.refused(t, "create_sandbox", map[string]any{"image": "python:3.12-sandtray-absent"}, "sandbox.allow_network")

	// A local image never needs a pull, whatever the policy.
	never.client.sandbox(t, map[string]any{"image": never.cfg.DefaultImage})
}
