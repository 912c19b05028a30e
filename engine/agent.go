package engine

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/sandtray/sandtray/agent/agentbin"
	"github.com/sandtray/sandtray/engine/runtime"
)

// linkable reports whether the engine can link to its sandboxes' agents
// (engine/internal/execgate): a Linux engine, and the runtime on its own
// host (a local socket, and the daemon's host name is this one's: not a VM
// such as Docker Desktop's or Colima's, whose containers see none of this
// host's folders).
func linkable(ep runtime.Endpoint, info runtime.DaemonInfo) bool {
	if goruntime.GOOS != "linux" || !strings.HasPrefix(ep.Host, "unix://") {
		return false
	}
	host, err := os.Hostname()
	return err == nil && host != "" && info.Host == host
}

// agentFor is the agent every sandbox gets (see engine/internal/execgate):
// given's, or the one built into Sandtray for the runtime's architecture
// (this host's when the runtime does not answer now).
func agentFor(ctx context.Context, d runtime.Runtime, given *runtime.Agent) (*runtime.Agent, error) {
	if given != nil {
		return given, nil
	}
	arch := goruntime.GOARCH
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, a, err := d.Platform(pctx); err == nil && a != "" {
		arch = a
	}
	bin, digest, err := agentbin.Binary(arch)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &runtime.Agent{Binary: bin, Digest: digest}, nil
}
