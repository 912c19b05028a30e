package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// BridgeNetwork is the Docker network of Sandtray's own that network
// "bridge" means everywhere in this package: Create, ConnectNetwork and
// DisconnectNetwork take "bridge" to mean it, and Inspect reports it as
// "bridge". Unlike Docker's default bridge it has inter-container traffic
// disabled (com.docker.network.bridge.enable_icc=false), so a sandbox on it
// can reach the outside but no other container. It is created on demand and
// left in place, like an image.
const BridgeNetwork = "sandtray-bridge"

// dockerDefaultBridge is how Inspect reports Docker's own default bridge
// (which a sandbox made by an older Sandtray may still be on), so that
// taking a sandbox to "bridge" or "none" moves it off that one too.
const dockerDefaultBridge = "docker-bridge"

// iccOption is the bridge driver's inter-container traffic switch.
const iccOption = "com.docker.network.bridge.enable_icc"

// bridgeLock serialises the creation of BridgeNetwork, so concurrent
// creates make it once.
var bridgeLock sync.Mutex

// dockerNetwork is the Docker network a sandbox network name means.
func dockerNetwork(name string) string {
	switch name {
	case sandbox.NetworkBridge:
		return BridgeNetwork
	case dockerDefaultBridge:
		return "bridge"
	}
	return name
}

// sandboxNetwork is the name Inspect reports for a Docker network.
func sandboxNetwork(name string) string {
	switch name {
	case BridgeNetwork:
		return sandbox.NetworkBridge
	case "bridge":
		return dockerDefaultBridge
	}
	return name
}

// ensureBridge makes BridgeNetwork when it is missing. A network of that
// name that lets containers talk to each other (made by someone else) is
// refused rather than used.
func (c *Client) ensureBridge(ctx context.Context) error {
	bridgeLock.Lock()
	defer bridgeLock.Unlock()
	res, err := c.api.NetworkInspect(ctx, BridgeNetwork, client.NetworkInspectOptions{})
	if err == nil {
		if res.Network.Options[iccOption] != "false" && res.Network.Labels[sandbox.LabelManaged] == "true" {
			return iccIgnored() // made by Sandtray: the engine dropped the option
		}
		if res.Network.Options[iccOption] != "false" {
			return fmt.Errorf("Docker network %s lets containers reach each other (%s is not \"false\"); remove it (`docker network rm %s`) and Sandtray makes its own: %w",
				BridgeNetwork, iccOption, BridgeNetwork, sandbox.ErrConflict)
		}
		return nil
	}
	if err = wrap("inspect network "+BridgeNetwork, err); !errors.Is(err, sandbox.ErrNotFound) {
		return err
	}
	_, err = c.api.NetworkCreate(ctx, BridgeNetwork, client.NetworkCreateOptions{
		Driver:  "bridge",
		Options: map[string]string{iccOption: "false"},
		Labels:  map[string]string{sandbox.LabelManaged: "true"},
	})
	if err != nil {
		return wrap("create network "+BridgeNetwork, err)
	}
	return c.checkICC(ctx)
}

// checkICC makes sure the network just made kept inter-container traffic
// off. Podman's compatible API (4.x) creates the network but ignores the
// option with only a warning: sandboxes on it could reach each other, so
// the network is removed again and bridged sandboxes refused on that engine.
func (c *Client) checkICC(ctx context.Context) error {
	res, err := c.api.NetworkInspect(ctx, BridgeNetwork, client.NetworkInspectOptions{})
	if err != nil {
		return wrap("inspect network "+BridgeNetwork, err)
	}
	if res.Network.Options[iccOption] == "false" {
		return nil
	}
	_, rerr := c.api.NetworkRemove(ctx, BridgeNetwork, client.NetworkRemoveOptions{})
	return errors.Join(iccIgnored(), wrap("remove network "+BridgeNetwork, rerr))
}

// iccIgnored is the refusal of a bridged sandbox on an engine that ignores
// the inter-container traffic switch.
func iccIgnored() error {
	return fmt.Errorf("this container engine does not turn off traffic between containers on a network (it ignores %s=false), "+
		"so Sandtray puts no sandbox on a shared bridge there: sandboxes on it could reach each other. "+
		"Use network \"none\" (the default) and images that already have the packages needed, or Docker Engine for bridged sandboxes and install_packages: %w",
		iccOption, sandbox.ErrUnsupported)
}
