package agentbin

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
)

// TestBinaryFromTheEnvironment: a build without an embedded agent takes the
// one $SANDTRAY_AGENT names, for its own architecture only; with neither,
// the error says how to build it.
func TestBinaryFromTheEnvironment(t *testing.T) {
	if _, err := bins.Open("bin/sandtray-agent-linux-riscv64.gz"); err == nil {
		t.Skip("a riscv64 agent is embedded")
	}
	p := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(p, []byte("an agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPath, p)
	if _, err := bins.Open("bin/sandtray-agent-linux-" + goruntime.GOARCH + ".gz"); err != nil {
		mu.Lock()
		delete(cache, goruntime.GOARCH)
		mu.Unlock()
		b, digest, err := Binary(goruntime.GOARCH)
		if err != nil || string(b) != "an agent" || len(digest) != 64 {
			t.Errorf("Binary = %q, %q, %v; want the file $%s names", b, digest, err, EnvPath)
		}
	}
	_, _, err := Binary("riscv64")
	if !errors.Is(err, ErrMissing) || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("an architecture with no agent: %v, want ErrMissing", err)
	}
}
