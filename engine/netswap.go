package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// restoreTimeout bounds taking a sandbox offline again after an install. It
// runs on a context of its own, so a cancelled or timed-out install still
// restores the network.
const restoreTimeout = 30 * time.Second

// installLocks serialises installs per container id (package managers lock
// their databases anyway), so one install never takes the network away from
// another that is still downloading. Container ids are unique across engines.
var installLocks sync.Map // container id → chan struct{} (capacity 1)

// lockInstall waits for the sandbox's install slot, or for ctx.
func lockInstall(ctx context.Context, id string) (unlock func(), err error) {
	v, _ := installLocks.LoadOrStore(id, make(chan struct{}, 1))
	slot := v.(chan struct{})
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for another install in the same sandbox: %w", ctx.Err())
	}
}

// attachForInstall puts an offline sandbox on the bridge network and returns
// the function that takes it offline again; a sandbox created with the bridge
// network is left as it is. Docker refuses to add a network next to "none",
// so the swap is: disconnect "none", connect "bridge", and the reverse after.
// The container's HostConfig keeps saying "none" throughout.
func (e *Engine) attachForInstall(ctx context.Context, b *box) (restore func() error, err error) {
	if b.spec.Network == sandbox.NetworkBridge {
		return func() error { return nil }, nil
	}
	if !e.cfg.Sandbox.AllowNetwork {
		return nil, fmt.Errorf("installing packages needs the network, and the user's config forbids network access (sandbox.allow_network = false); ask the user to allow it, or use an image that already has the packages: %w", sandbox.ErrForbidden)
	}
	restore = func() error { return e.takeOffline(ctx, b) }
	if err := e.setNetwork(ctx, b, sandbox.NetworkBridge); err != nil {
		// Half a swap (none disconnected, bridge not connected) is undone too.
		if rerr := restore(); rerr != nil {
			e.log.Error("restore network after a failed attach", "sandbox", b.name, "err", rerr)
		}
		return nil, fmt.Errorf("give sandbox %s network access for the install: %w", b.name, err)
	}
	return restore, nil
}

// takeOffline puts the sandbox back on network "none", with its own deadline.
func (e *Engine) takeOffline(ctx context.Context, b *box) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	if err := e.setNetwork(ctx, b, sandbox.NetworkNone); err != nil {
		e.log.Error("sandbox left on the network after an install", "sandbox", b.name, "err", err)
		return fmt.Errorf("could not take sandbox %s off the network after the install: %w", b.name, err)
	}
	return nil
}

// setNetwork leaves the container on exactly the network want: it
// disconnects every other network first (Docker refuses "none" next to
// anything else), then connects want if it is missing.
func (e *Engine) setNetwork(ctx context.Context, b *box, want string) error {
	ctr, err := e.docker.Inspect(ctx, b.id)
	if err != nil {
		return e.gone(b, err)
	}
	for _, n := range ctr.Networks {
		if n == want {
			continue
		}
		if err := e.docker.DisconnectNetwork(ctx, b.id, n); err != nil {
			return err
		}
	}
	if slices.Contains(ctr.Networks, want) {
		return nil
	}
	return e.docker.ConnectNetwork(ctx, b.id, want)
}

// restoreOfflineNetworks takes every sandbox created without network off any
// network it is on: an engine that crashed during an install could not do it
// itself. The engine's adoption is the place to call it.
func (e *Engine) restoreOfflineNetworks(ctx context.Context) {
	e.mu.Lock()
	var offline []*box
	for _, b := range e.boxes {
		if b.spec.Network == sandbox.NetworkNone {
			offline = append(offline, b)
		}
	}
	e.mu.Unlock()
	for _, b := range offline {
		ctr, err := e.docker.Inspect(ctx, b.id)
		if err != nil || slices.Equal(ctr.Networks, []string{sandbox.NetworkNone}) {
			continue
		}
		e.log.Warn("sandbox without network found on a network; taking it offline", "sandbox", b.name, "networks", ctr.Networks)
		if err := e.setNetwork(ctx, b, sandbox.NetworkNone); err != nil {
			e.log.Error("take sandbox offline", "sandbox", b.name, "err", err)
		}
	}
}
