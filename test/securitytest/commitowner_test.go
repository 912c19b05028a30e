package securitytest

import (
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestCommitLeavesAnotherEnginesImage (F64): engine A committed a tag;
// engine B (another state dir on the same daemon) cannot move it or remove
// A's image with overwrite.
func TestCommitLeavesAnotherEnginesImage(t *testing.T) {
	a := newEnv(t, func(c *config.Config) { c.Pool.Size = 0 })
	b := newEnv(t, func(c *config.Config) { c.Pool.Size = 0 })
	tag := "sandtray-local/securitytest-owner-" + randomName() + ":1"
	untagLater(t, tag)
	idA := a.client.sandbox(t, nil)
	a.client.command(t, idA, "echo a > /who", 10)
	a.client.ok(t, "commit_sandbox", map[string]any{"sandbox_id": idA, "image": tag})
	before := imageID(t, tag)
	idB := b.client.sandbox(t, nil)
	b.client.command(t, idB, "echo b > /who", 10)
	t.Log(b.client.refused(t, "commit_sandbox", map[string]any{"sandbox_id": idB, "image": tag, "overwrite": true}, tag, "another").text)
	if got := imageID(t, tag); got != before {
		t.Errorf("engine B moved engine A's %s (now %q, was %s)", tag, got, before)
	}
	if out := dockerCLI(t, "image", "inspect", "--format", "{{.Id}}", before); out != before {
		t.Errorf("engine A's image %s is gone", before)
	}
	// A still moves its own.
	a.client.ok(t, "commit_sandbox", map[string]any{"sandbox_id": idA, "image": tag, "overwrite": true})
}
