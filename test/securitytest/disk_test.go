//go:build linux

package securitytest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// diskLimitConfig is the config a user would write to bound each sandbox's
// disk use. On Docker 20.10 with fuse-overlayfs, --storage-opt size is
// refused (it needs overlay2 on xfs with pquota), and a tmpfs workdir would
// lose files on restart and in commits; so the bound has to come from the
// engine: a limits.disk_mb setting it enforces by watching each sandbox's
// writable layer.
const diskLimitConfig = "[limits]\ndisk_mb = 256\n"

// TestDiskFill: a sandbox that writes far more than its disk limit is
// stopped, the model is told, and the host keeps its free space.
func TestDiskFill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(diskLimitConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	limited, err := config.Load(path)
	if err != nil {
		t.Fatalf("no disk bound: Sandtray has no per-sandbox disk limit (%v), so a sandbox can fill the host's disk: "+
			"a 2 GiB write succeeds and the host loses 2 GiB (see docs/security.md, F4)", err)
	}
	e := newEnv(t, func(c *config.Config) { c.Limits = limited.Limits })
	id := e.client.sandbox(t, nil)
	before := freeBytes(t, "/var/lib/docker")
	r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "timeout_s": 120,
		"command": "for i in $(seq 32); do dd if=/dev/zero of=/workspace/fill$i bs=1M count=64 status=none || exit 1; done; echo FILLED"})
	out := execOf(r)
	if strings.Contains(out.stdout, "FILLED") {
		t.Errorf("a sandbox limited to 256 MB wrote 2 GiB: %s", out.text)
	}
	if !strings.Contains(strings.ToLower(r.text), "disk") {
		t.Errorf("the result does not say the disk limit stopped it: %s", r.text)
	}
	if lost := before - freeBytes(t, "/var/lib/docker"); lost > 1<<30 {
		t.Errorf("the host lost %d MiB of free space to a sandbox limited to 256 MB", lost>>20)
	}
}

// TestSharedMemoryBounded: /dev/shm, the one tmpfs a sandbox can write, is
// Docker's 64 MB and counts against the sandbox's memory.
func TestSharedMemoryBounded(t *testing.T) {
	e := newEnv(t)
	id := e.client.sandbox(t, nil)
	out := e.client.command(t, id, "dd if=/dev/zero of=/dev/shm/fill bs=1M count=256 2>&1; df -m /dev/shm | tail -1", 30)
	if !strings.Contains(out.stdout, "No space left") {
		t.Errorf("writing 256 MB to /dev/shm: %s", out.text)
	}
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	return int64(st.Bavail) * st.Bsize
}
