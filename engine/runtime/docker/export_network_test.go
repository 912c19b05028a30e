package docker

import (
	"context"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// BridgeOptions returns the driver options of Sandtray's bridge network as
// the daemon holds them, and whether the network exists, for tests.
func (c *Client) BridgeOptions(ctx context.Context) (map[string]string, bool, error) {
	res, err := c.api.NetworkInspect(ctx, BridgeNetwork, client.NetworkInspectOptions{})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return res.Network.Options, true, nil
}

// EnsureNetwork is ensureBridge for a network called name, so a test works
// on a network of its own, never on the bridge other engines use.
func (c *Client) EnsureNetwork(ctx context.Context, name string) error {
	return c.ensureNetwork(ctx, name)
}

// CreateTwinNetwork makes a network called name as an engine that raced
// another would: whether or not one of that name exists.
func (c *Client) CreateTwinNetwork(ctx context.Context, name string) (string, error) {
	res, err := c.api.NetworkCreate(ctx, name, client.NetworkCreateOptions{
		Driver: "bridge", Options: map[string]string{iccOption: "false"},
		Labels: map[string]string{sandbox.LabelManaged: "true"},
	})
	return res.ID, err
}

// NetworkIDs lists the ids of the networks called exactly name, oldest first.
func (c *Client) NetworkIDs(ctx context.Context, name string) ([]string, error) {
	nets, err := c.networksNamed(ctx, name)
	slices.SortFunc(nets, func(a, b network.Summary) int { return a.Created.Compare(b.Created) })
	var ids []string
	for _, n := range nets {
		ids = append(ids, n.ID)
	}
	return ids, err
}

// RemoveNetwork removes a network by id.
func (c *Client) RemoveNetwork(ctx context.Context, id string) error {
	_, err := c.api.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
	return err
}
