package docker

import (
	"context"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// DeviceRequestsOf returns the device requests Docker holds for a container,
// for tests to check what Create sent.
func (c *Client) DeviceRequestsOf(ctx context.Context, id string) ([]container.DeviceRequest, error) {
	res, err := c.api.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, err
	}
	return res.Container.HostConfig.DeviceRequests, nil
}
