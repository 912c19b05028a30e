package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestForbiddenNetworkTakesBridgedSandboxesOffline: after the user sets
// sandbox.allow_network = false, the next engine takes a persistent
// sandbox created with the bridge network offline when it adopts it, and
// again each time it starts it.
func TestForbiddenNetworkTakesBridgedSandboxesOffline(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.AllowNetwork = true })
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "online", Persistent: true, Network: sandbox.NetworkBridge})
	if got := te.networksOf(t, info.ID); len(got) != 1 || got[0] == "none" {
		t.Fatalf("a bridged sandbox is on %v", got)
	}
	te.stopLoops() // the engine stops; the user changes the config

	cfg := te.cfg
	cfg.Sandbox.AllowNetwork = false
	e2, err := newEngine(ctx, cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.stopLoops()
	te.wantOffline(t, info.ID)

	// Stopped and started again, Docker puts it back on its network.
	if _, err := e2.Stop(ctx, te.owner, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	te.wantOffline(t, info.ID)
}
