package docker_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/runtime/docker"
)

// TestSandboxUlimits: every sandbox has explicit nofile and nproc limits,
// recorded by the daemon and in force inside, and code in the sandbox cannot
// raise them (soft = hard). Without them Podman's compat API cannot create
// a sandbox on a host whose hard nofile limit is below 1048576.
func TestSandboxUlimits(t *testing.T) {
	c, id := newSandbox(t)
	raw, err := c.InspectRaw(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HostConfig struct {
			Ulimits []struct {
				Name       string
				Soft, Hard int64
			}
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, u := range doc.HostConfig.Ulimits {
		// Podman records RLIMIT_NOFILE where Docker records nofile.
		got[strings.ToLower(strings.TrimPrefix(u.Name, "RLIMIT_"))] = [2]int64{u.Soft, u.Hard}
	}
	want := map[string][2]int64{"nofile": {docker.NoFileLimit, docker.NoFileLimit}, "nproc": {docker.NProcLimit, docker.NProcLimit}}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("inspect: ulimit %s = %v, want soft and hard %v", name, got[name], w)
		}
	}
	out := run(t, c, id, "bash", "-c", "ulimit -n; ulimit -Hn; ulimit -u; ulimit -n 100000 2>/dev/null && echo raised || echo refused")
	wantOut := fmt.Sprintf("%d\n%d\n%d\nrefused\n", docker.NoFileLimit, docker.NoFileLimit, docker.NProcLimit)
	if strings.TrimSpace(out) != strings.TrimSpace(wantOut) {
		t.Errorf("inside the sandbox: %q, want %q", out, wantOut)
	}
}
