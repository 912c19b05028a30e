package docker

import (
	"context"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
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
