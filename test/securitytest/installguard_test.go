package securitytest

import (
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestInstallIsUnderTheDiskGuard: install_packages runs under the same
// guard as other calls: an install that grows the sandbox past
// limits.disk_mb (apt's lists and numpy with its libraries take more than 64 MB) is
// stopped, and says so (issue 11, item 4).
func TestInstallIsUnderTheDiskGuard(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Limits.DiskMB = 64; c.Pool.Size = 0 })
	c := e.client
	id := c.sandbox(t, nil)
	c.refused(t, "install_packages", map[string]any{"sandbox_id": id, "packages": []string{"python3-numpy"}, "manager": "apt", "timeout_s": 300},
		"limits.disk_mb")
	if out := c.command(t, id, `python3 -c "import numpy" 2>/dev/null && echo present || echo absent`, 10); out.stdout != "absent\n" {
		t.Errorf("the install went on past the disk limit: numpy is %s", out.stdout)
	}
}
