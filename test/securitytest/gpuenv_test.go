package securitytest

import (
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestGPUPolicyHoldsAgainstEnv: with GPUs turned off (gpu.allow = false),
// create_sandbox's env cannot hand a sandbox GPUs through the NVIDIA
// Container Toolkit (NVIDIA_VISIBLE_DEVICES=all, which NVIDIA's runtime
// honours when it is Docker's default), nor reach the toolkit's hooks with
// LD_* (CVE-2025-23266), and neither can execute_command's env; a sandbox
// without GPUs says NVIDIA_VISIBLE_DEVICES=void (issue 23, item 4;
// docs/security.md F35). Before the fix the env went to the container as given.
func TestGPUPolicyHoldsAgainstEnv(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.GPU.Allow = false })
	c := e.client
	before := containersOf(t, e.labels)
	for _, env := range []map[string]any{
		{"NVIDIA_VISIBLE_DEVICES": "all"},
		{"NVIDIA_DRIVER_CAPABILITIES": "all", "LANG": "C.UTF-8"},
		{"LD_PRELOAD": "/workspace/evil.so"},
		{"ld_library_path": "/workspace"},
	} {
		c.refused(t, "create_sandbox", map[string]any{"env": env}, "env may not set", "create_sandbox's gpus")
	}
	if n := containersOf(t, e.labels); n != before {
		t.Errorf("refused creates left %d containers", n-before)
	}
	id := c.sandbox(t, nil)
	c.refused(t, "execute_command", map[string]any{"sandbox_id": id, "command": "id", "env": map[string]any{"LD_PRELOAD": "/tmp/x.so"}},
		"execute_command's env may not set LD_PRELOAD", "export LD_PRELOAD=")
	c.refused(t, "execute_command", map[string]any{"sandbox_id": id, "command": "id", "env": map[string]any{"NVIDIA_VISIBLE_DEVICES": "all"}},
		"may not set NVIDIA_VISIBLE_DEVICES")

	env, _ := e.inspect(t, id)["Config"].(map[string]any)["Env"].([]any)
	if !slices.Contains(env, any("NVIDIA_VISIBLE_DEVICES=void")) {
		t.Errorf("docker inspect: env %v; want NVIDIA_VISIBLE_DEVICES=void", env)
	}
	if out := c.command(t, id, "env | grep ^NVIDIA_", 30); strings.TrimSpace(out.stdout) != "NVIDIA_VISIBLE_DEVICES=void" {
		t.Errorf("env in the sandbox: %q", out.stdout)
	}
}
