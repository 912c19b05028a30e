package dockertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"testing"

	"github.com/sandtray/sandtray/agent/agentbin"
	"github.com/sandtray/sandtray/engine/runtime"
)

var (
	agentOnce sync.Once
	agentErr  error
)

// Agent returns the sandbox agent for this host's architecture, which the
// engine gives every sandbox: the one built into the test binary (`make
// test` builds it first), or, in a `go test` without it, one built now
// (static, as `make agent` builds it) and named in $SANDTRAY_AGENT, where
// the engine finds it too.
func Agent(t testing.TB) *runtime.Agent {
	t.Helper()
	agentOnce.Do(func() {
		if _, _, err := agentbin.Binary(goruntime.GOARCH); err == nil {
			return
		}
		dir, err := os.MkdirTemp("", "sandtray-agent")
		if err != nil {
			agentErr = err
			return
		}
		out := filepath.Join(dir, "sandtray-agent")
		cmd := exec.Command("go", "build", "-trimpath", "-o", out, "github.com/sandtray/sandtray/app/cmd/sandtray-agent")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if b, err := cmd.CombinedOutput(); err != nil {
			agentErr = fmt.Errorf("build the sandbox agent (make agent): %v\n%s", err, b)
			return
		}
		agentErr = os.Setenv(agentbin.EnvPath, out)
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	bin, digest, err := agentbin.Binary(goruntime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.Agent{Binary: bin, Digest: digest}
}
