package docker

import (
	"context"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/client"
)

// Disk reports where the container's writable layer lives.
func (c *Client) Disk(ctx context.Context, id string) (runtime.DiskInfo, error) {
	res, err := c.api.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return runtime.DiskInfo{}, wrap("inspect container "+id, err)
	}
	var d runtime.DiskInfo
	if g := res.Container.GraphDriver; g != nil && c.endpoint.Local() {
		// A remote daemon's paths are its own host's, never readable here.
		d.UpperDir = g.Data["UpperDir"]
	}
	return d, nil
}

// SizeRw is the size of the files in the container's writable layer, as
// Docker computes it: slow (seconds on fuse-overlayfs, where Docker compares
// the whole file tree with the image's), so only a fallback.
func (c *Client) SizeRw(ctx context.Context, id string) (int64, error) {
	res, err := c.api.ContainerInspect(ctx, id, client.ContainerInspectOptions{Size: true})
	if err != nil {
		return 0, wrap("inspect container "+id, err)
	}
	if res.Container.SizeRw == nil {
		return 0, nil
	}
	return *res.Container.SizeRw, nil
}
