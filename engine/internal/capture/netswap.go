package capture

import (
	"context"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Installs no longer attach a network: a sandbox without the bridge
// reaches its package hosts through the egress gate (Target.Gate). What is
// left here keeps sandboxes off networks they must not be on: one that an
// older Sandtray left on the bridge after a crash during an install, and
// one created with the bridge while the user's config now forbids it.

// restoreTimeout bounds continuing a sandbox's processes after an install
// (thaw). It runs on a context of its own, so a cancelled or timed-out
// install still continues them.
const restoreTimeout = 30 * time.Second

// setNetwork leaves the container on exactly the network want: it
// disconnects every other network first (Docker refuses "none" next to
// anything else), then connects want if it is missing.
func (c *Capture) setNetwork(ctx context.Context, t Target, want string) error {
	ctr, err := c.docker.Inspect(ctx, t.ID())
	if err != nil {
		return t.Gone(err)
	}
	for _, n := range ctr.Networks {
		if n == want {
			continue
		}
		if err := c.docker.DisconnectNetwork(ctx, t.ID(), n); err != nil {
			return err
		}
	}
	if slices.Contains(ctr.Networks, want) {
		return nil
	}
	return c.docker.ConnectNetwork(ctx, t.ID(), want)
}

// RestoreOffline takes t off any network it is on when it must be on none
// (see keptOffline): an engine that crashed during an install could not do
// it itself, and Docker reconnects a bridged sandbox at every start. The
// engine's adoption, and its start of a sandbox, are the places to call it.
func (c *Capture) RestoreOffline(ctx context.Context, t Target) {
	if !c.keptOffline(t) {
		return
	}
	ctr, err := c.docker.Inspect(ctx, t.ID())
	if err != nil || slices.Equal(ctr.Networks, []string{sandbox.NetworkNone}) {
		return
	}
	c.log.Warn("sandbox found on a network it must not be on; taking it offline", "sandbox", t.Name(), "networks", ctr.Networks)
	if err := c.setNetwork(ctx, t, sandbox.NetworkNone); err != nil {
		c.log.Error("take sandbox offline", "sandbox", t.Name(), "err", err)
	}
}

// keptOffline reports whether t must be on no network: it was created
// without the bridge (none, or egress: only the gate's channel), or the
// user's config now forbids the bridge.
func (c *Capture) keptOffline(t Target) bool {
	return t.Network != sandbox.NetworkBridge || !c.cfg.AllowNetwork
}
