package docker

import (
	"context"
	"slices"

	"github.com/moby/moby/client"
)

// Daemon describes the Docker engine a client talks to, for diagnostics.
type Daemon struct {
	Version       string   // e.g. "20.10.24", or Podman's "4.3.1"
	API           string   // e.g. "1.41"
	Product       string   // "Docker Engine", "Podman Engine", …: the first component's name
	StorageDriver string   // e.g. "overlay2", "fuse-overlayfs"
	Runtimes      []string // OCI runtimes, sorted: "runc", "runsc" (gVisor), …
}

// Daemon asks the daemon what it is: version, API, storage driver and runtimes.
func (c *Client) Daemon(ctx context.Context) (Daemon, error) {
	v, err := c.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return Daemon{}, wrap("get Docker version", err)
	}
	d := Daemon{Version: v.Version, API: v.APIVersion}
	if len(v.Components) > 0 {
		d.Product = v.Components[0].Name
	}
	if d.Product == "Engine" || d.Product == "" {
		d.Product = "Docker Engine" // Docker's own name for itself is just "Engine"
	}
	info, err := c.api.Info(ctx, client.InfoOptions{})
	if err != nil {
		return d, wrap("get Docker info", err)
	}
	d.StorageDriver = info.Info.Driver
	for name := range info.Info.Runtimes {
		d.Runtimes = append(d.Runtimes, name)
	}
	slices.Sort(d.Runtimes)
	return d, nil
}
