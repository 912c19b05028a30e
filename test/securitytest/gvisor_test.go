package securitytest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/test/dockertest"
)

// gvisorRuntime is the runtime name Sandtray's config uses for gVisor.
const gvisorRuntime = "runsc"

// requireRuntime skips the test, saying why, unless the daemon has runtime
// registered (a "runtimes" entry in daemon.json).
func requireRuntime(t *testing.T, runtime string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	names, err := dockertest.Client(t).Runtimes(ctx)
	if err != nil {
		t.Fatalf("list Docker runtimes: %v", err)
	}
	if !slices.Contains(names, runtime) {
		t.Skipf("the Docker daemon has no %q runtime (it has %v): install gVisor (apt-get install runsc) and register it in /etc/docker/daemon.json to run these tests under it", runtime, names)
	}
}

// TestAttacksGVisor runs every attack again with sandbox.runtime = "runsc".
func TestAttacksGVisor(t *testing.T) {
	requireRuntime(t, gvisorRuntime)
	t.Parallel()
	e := newEnv(t, func(c *config.Config) { c.Sandbox.Runtime = gvisorRuntime })
	id := e.client.sandbox(t, nil)
	if rt := e.inspect(t, id)["HostConfig"].(map[string]any)["Runtime"]; rt != gvisorRuntime {
		t.Fatalf("a sandbox created with sandbox.runtime = %q runs under %v", gvisorRuntime, rt)
	}
	if out := e.client.command(t, id, "dmesg 2>/dev/null | head -1; uname -r", 10); out.code != 0 {
		t.Fatalf("a gVisor sandbox cannot run a command: %s", out.text)
	}
	e.client.ok(t, "delete_sandbox", map[string]any{"sandbox_id": id})
	runAttacks(t, e)
}
