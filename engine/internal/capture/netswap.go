package capture

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// restoreTimeout bounds taking a sandbox offline again after an install. It
// runs on a context of its own, so a cancelled or timed-out install still
// restores the network.
const restoreTimeout = 30 * time.Second

// attachForInstall puts an offline sandbox on the bridge network and returns
// the function that takes it offline again; a sandbox created with the bridge
// network is left as it is. Docker refuses to add a network next to "none",
// so the swap is: disconnect "none", connect "bridge", and the reverse after.
// The container's HostConfig keeps saying "none" throughout.
func (c *Capture) attachForInstall(ctx context.Context, t Target) (restore func() error, err error) {
	if t.Network == sandbox.NetworkBridge {
		return func() error { return nil }, nil
	}
	if !c.cfg.AllowNetwork {
		return nil, fmt.Errorf("installing packages needs the network, and the user's config forbids network access (sandbox.allow_network = false); ask the user to allow it, or use an image that already has the packages: %w", sandbox.ErrForbidden)
	}
	restore = func() error { return c.takeOffline(ctx, t) }
	if err := c.setNetwork(ctx, t, sandbox.NetworkBridge); err != nil {
		// Half a swap (none disconnected, bridge not connected) is undone too.
		if rerr := restore(); rerr != nil {
			c.log.Error("restore network after a failed attach", "sandbox", t.Name, "err", rerr)
		}
		return nil, fmt.Errorf("give sandbox %s network access for the install: %w", t.Name, err)
	}
	return restore, nil
}

// takeOffline puts the sandbox back on network "none", with its own
// deadline, trying again (after 0.25 s, 0.5 s, 1 s, …) while Docker fails.
func (c *Capture) takeOffline(ctx context.Context, t Target) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	err := c.setNetwork(ctx, t, sandbox.NetworkNone)
	for wait := 250 * time.Millisecond; err != nil && !errors.Is(err, sandbox.ErrNotFound); wait *= 2 {
		c.log.Warn("take sandbox offline: trying again", "sandbox", t.Name, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		if ctx.Err() != nil {
			break
		}
		err = c.setNetwork(ctx, t, sandbox.NetworkNone)
	}
	if err != nil {
		c.log.Error("sandbox left on the network after an install", "sandbox", t.Name, "err", err)
		return fmt.Errorf("could not take sandbox %s off the network after the install: %w", t.Name, err)
	}
	return nil
}

// setNetwork leaves the container on exactly the network want: it
// disconnects every other network first (Docker refuses "none" next to
// anything else), then connects want if it is missing.
func (c *Capture) setNetwork(ctx context.Context, t Target, want string) error {
	ctr, err := c.docker.Inspect(ctx, t.ID)
	if err != nil {
		return t.gone(err)
	}
	for _, n := range ctr.Networks {
		if n == want {
			continue
		}
		if err := c.docker.DisconnectNetwork(ctx, t.ID, n); err != nil {
			return err
		}
	}
	if slices.Contains(ctr.Networks, want) {
		return nil
	}
	return c.docker.ConnectNetwork(ctx, t.ID, want)
}

// RestoreOffline takes t off any network it is on when it must be on none
// (see keptOffline): an engine that crashed during an install could not do
// it itself, and Docker reconnects a bridged sandbox at every start. The
// engine's adoption, and its start of a sandbox, are the places to call it.
func (c *Capture) RestoreOffline(ctx context.Context, t Target) {
	if !c.keptOffline(t) {
		return
	}
	ctr, err := c.docker.Inspect(ctx, t.ID)
	if err != nil || slices.Equal(ctr.Networks, []string{sandbox.NetworkNone}) {
		return
	}
	c.log.Warn("sandbox found on a network it must not be on; taking it offline", "sandbox", t.Name, "networks", ctr.Networks)
	if err := c.setNetwork(ctx, t, sandbox.NetworkNone); err != nil {
		c.log.Error("take sandbox offline", "sandbox", t.Name, "err", err)
	}
}

// keptOffline reports whether t must be on no network: it was created
// without one, or the user's config now forbids the network.
func (c *Capture) keptOffline(t Target) bool {
	return t.Network == sandbox.NetworkNone || !c.cfg.AllowNetwork
}
