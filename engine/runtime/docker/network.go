package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/moby/moby/api/types/network"
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
	return c.ensureNetwork(ctx, BridgeNetwork)
}

// networkRounds bounds how often ensureNetwork resolves twins before it
// gives up: each engine that races makes at most one network per call, so
// the twins settle within a few rounds.
const networkRounds = 5

// ensureNetwork makes Sandtray's bridge network name when it is missing.
// bridgeLock keeps one engine from making it twice; another engine on the
// daemon (another state dir, another user) may make it at the same moment,
// and Docker before API 1.44 lets two networks share a name, which then
// fails every container that names it ("ambiguous") for every engine.
// Every engine keeps the oldest of the twins and removes the others it
// finds (the ones Sandtray made), round after round, until one is left: a
// racer's create that lands after a round only takes another.
func (c *Client) ensureNetwork(ctx context.Context, name string) error {
	var nets []network.Summary
	for range networkRounds {
		var err error
		if nets, err = c.networkRound(ctx, name); err != nil {
			return err
		}
		if len(nets) == 1 {
			return checkNetwork(name, nets[0])
		}
	}
	return fmt.Errorf("Docker has %d networks named %s, so no container can name it; remove all but one (`docker network ls --filter name=%s`, then `docker network rm ID`): %w",
		len(nets), name, name, sandbox.ErrConflict)
}

// networkRound is one round of ensureNetwork: it makes the network when
// none is called name, removes the twins but the oldest, and returns what
// is left.
func (c *Client) networkRound(ctx context.Context, name string) ([]network.Summary, error) {
	nets, err := c.networksNamed(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(nets) == 0 {
		created, err := c.api.NetworkCreate(ctx, name, client.NetworkCreateOptions{
			Driver:  "bridge",
			Options: map[string]string{iccOption: "false"},
			Labels:  map[string]string{sandbox.LabelManaged: "true"},
		})
		if err != nil {
			return nil, wrap("create network "+name, err)
		}
		// Gone already: an engine that raced this one removed it as the
		// younger twin of its own, which the next list shows.
		if err := c.checkICC(ctx, name, created.ID); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			return nil, err
		}
		if nets, err = c.networksNamed(ctx, name); err != nil {
			return nil, err
		}
	}
	if len(nets) <= 1 {
		return nets, nil
	}
	slices.SortFunc(nets, func(a, b network.Summary) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	// No container can be on a twin (Docker refuses the ambiguous name even
	// by id), and Docker refuses to remove a network a container is on, so
	// no sandbox loses its network; what cannot be removed is left to the
	// user.
	for _, n := range nets[1:] {
		if n.Labels[sandbox.LabelManaged] == "true" {
			_, _ = c.api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}) // in use, or gone already: the list says
		}
	}
	return c.networksNamed(ctx, name)
}

// checkNetwork accepts the one network called name when it keeps
// inter-container traffic off.
func checkNetwork(name string, n network.Summary) error {
	if n.Options[iccOption] != "false" && n.Labels[sandbox.LabelManaged] == "true" {
		return iccIgnored() // made by Sandtray: the engine dropped the option
	}
	if n.Options[iccOption] != "false" {
		return fmt.Errorf("Docker network %s lets containers reach each other (%s is not \"false\"); remove it (`docker network rm %s`) and Sandtray makes its own: %w",
			name, iccOption, name, sandbox.ErrConflict)
	}
	return nil
}

// networksNamed lists the networks called exactly name (Docker's filter
// also matches part of a name).
func (c *Client) networksNamed(ctx context.Context, name string) ([]network.Summary, error) {
	res, err := c.api.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("name", name)})
	if err != nil {
		return nil, wrap("list networks named "+name, err)
	}
	return slices.DeleteFunc(res.Items, func(n network.Summary) bool { return n.Name != name }), nil
}

// checkICC makes sure the network just made kept inter-container traffic
// off. Podman's compatible API (4.x) creates the network but ignores the
// option with only a warning: sandboxes on it could reach each other, so
// the network is removed again and bridged sandboxes refused on that engine.
func (c *Client) checkICC(ctx context.Context, name, id string) error {
	// By id: another engine may make a network of the same name meanwhile,
	// and Docker then calls the name ambiguous.
	res, err := c.api.NetworkInspect(ctx, id, client.NetworkInspectOptions{})
	if err != nil {
		return wrap("inspect network "+name, err)
	}
	if res.Network.Options[iccOption] == "false" {
		return nil
	}
	_, rerr := c.api.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
	return errors.Join(iccIgnored(), wrap("remove network "+name, rerr))
}

// iccIgnored is the refusal of a bridged sandbox on an engine that ignores
// the inter-container traffic switch.
func iccIgnored() error {
	return fmt.Errorf("this container engine does not turn off traffic between containers on a network (it ignores %s=false), "+
		"so Sandtray puts no sandbox on a shared bridge there: sandboxes on it could reach each other. "+
		"Use network \"none\" (the default) and images that already have the packages needed, or Docker Engine for bridged sandboxes and install_packages: %w",
		iccOption, sandbox.ErrUnsupported)
}
