package doctor

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKubernetesReplacesDocker: with runtime.name = "kubernetes" the report
// names the runtime and checks the cluster, not Docker, its image or
// gVisor, and a cluster it cannot reach fails with what to fix.
func TestKubernetesReplacesDocker(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.toml")
	cfg := "[runtime]\nname = \"kubernetes\"\n[kubernetes]\nkubeconfig = " + `"` + filepath.Join(dir, "no-such-kubeconfig") + `"` + "\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), Options{ConfigPath: cfgPath, SocketPath: filepath.Join(dir, "mcp.sock")})
	s := r.String()
	if r.OK() {
		t.Errorf("an unreachable cluster passed:\n%s", s)
	}
	for _, want := range []string{"FAIL  cluster", "no-such-kubeconfig", "fix: check kubernetes.kubeconfig", "runtime  kubernetes ([runtime] name in config.toml)"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in the report:\n%s", want, s)
		}
	}
	if regexp.MustCompile(`(?m)^\S+\s+(docker|image|gvisor)\s`).MatchString(s) {
		t.Errorf("the report checks Docker's image or gVisor for a cluster:\n%s", s)
	}
}
