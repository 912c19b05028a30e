package securitytest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
)

// benchEnv names docker-bench-security.sh (github.com/docker/docker-bench-security,
// never part of this repository) for TestDockerBench.
const benchEnv = "SANDTRAY_DOCKER_BENCH"

// benchWarn matches a check docker-bench-security warns on; colours
// (benchColour) are removed first.
var (
	benchWarn   = regexp.MustCompile(`(?m)^\[WARN\] ([0-9.]+) - `)
	benchColour = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// TestDockerBench measures live sandboxes of both profiles with
// docker-bench-security's sections 4 (container images) and 5 (container
// runtime). It runs only when $SANDTRAY_DOCKER_BENCH names the script, and
// checks that each profile warns on exactly the checks docs/security.md explains.
func TestDockerBench(t *testing.T) {
	script := os.Getenv(benchEnv)
	if script == "" {
		t.Skipf("set %s to docker-bench-security.sh to measure sandboxes against CIS sections 4 and 5", benchEnv)
	}
	for _, tt := range []struct {
		profile string
		want    []string // the checks it may warn on, sorted; see docs/security.md
	}{
		{config.ProfileStandard, []string{"4.1", "4.5", "4.6", "5.13", "5.2", "5.27"}},
		{config.ProfileStrict, []string{"4.5", "4.6", "5.2", "5.27"}},
	} {
		t.Run(tt.profile, func(t *testing.T) {
			e := newEnv(t, func(c *config.Config) { c.Sandbox.Profile = tt.profile; c.Pool.Size = 0 })
			name := "cis-" + tt.profile + "-" + randomName()
			e.client.sandbox(t, map[string]any{"name": name})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", filepath.Base(script), "-c", "container_images,container_runtime",
				"-i", "sandtray-"+name+","+e.cfg.DefaultImage[:len(e.cfg.DefaultImage)-len(":latest")], "-l", filepath.Join(t.TempDir(), "bench.log"))
			cmd.Dir = filepath.Dir(script)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("docker-bench-security: %v\n%s", err, out)
			}
			var warned []string
			for _, m := range benchWarn.FindAllStringSubmatch(benchColour.ReplaceAllString(string(out), ""), -1) {
				if !slices.Contains(warned, m[1]) {
					warned = append(warned, m[1])
				}
			}
			slices.Sort(warned)
			t.Logf("profile %s warns on %v", tt.profile, warned)
			if !slices.Equal(warned, tt.want) {
				t.Errorf("profile %s warns on %v, want %v\n%s", tt.profile, warned, tt.want, out)
			}
		})
	}
}
