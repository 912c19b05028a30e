package docker

import (
	"context"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/types/system"
	"github.com/moby/moby/client"
)

// Daemon asks the daemon what it is: version, API, storage driver and runtimes.
func (c *Client) Daemon(ctx context.Context) (runtime.DaemonInfo, error) {
	v, err := c.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return runtime.DaemonInfo{}, wrap("get Docker version", err)
	}
	d := runtime.DaemonInfo{Version: v.Version, API: v.APIVersion}
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
	d.StorageDriver, d.Host = info.Info.Driver, info.Info.Name
	for name := range info.Info.Runtimes {
		d.Runtimes = append(d.Runtimes, name)
	}
	slices.Sort(d.Runtimes)
	return d, nil
}

// isPodman reports whether the daemon is Podman's Docker-compatible
// service, asked once: where its API differs from Docker's, the client
// speaks Podman's dialect. An unanswered question is asked again next time.
func (c *Client) isPodman(ctx context.Context) bool {
	if v := c.podman.Load(); v != 0 {
		return v > 0
	}
	v, err := c.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return false
	}
	podman := slices.ContainsFunc(v.Components, func(c system.ComponentVersion) bool { return strings.HasPrefix(c.Name, "Podman") })
	if podman {
		c.podman.Store(1)
	} else {
		c.podman.Store(-1)
	}
	return podman
}
