package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"
)

// UpdateLimits changes a running container's memory limit (swap = memory,
// as Create sets it) and CPU quota in place. A zero value leaves that limit
// as it is. Docker refuses a memory limit below what the container uses now
// (sandbox.ErrInvalid or ErrConflict, by daemon).
func (c *Client) UpdateLimits(ctx context.Context, id string, memoryMB, milliCPUs int64) error {
	var r container.Resources
	if memoryMB > 0 {
		r.Memory = memoryMB << 20
		r.MemorySwap = r.Memory
	}
	r.NanoCPUs = max(milliCPUs, 0) * 1e6
	_, err := c.api.ContainerUpdate(ctx, id, client.ContainerUpdateOptions{Resources: &r})
	return wrap(fmt.Sprintf("update limits of container %s", id), err)
}

// ImageEvents streams the daemon's image events until ctx is done or the
// stream breaks; then the error channel receives the classified error (none
// when ctx ended it) and both channels close. The subscription is in place
// when ImageEvents returns.
func (c *Client) ImageEvents(ctx context.Context) (<-chan runtime.ImageEvent, <-chan error) {
	res := c.api.Events(ctx, client.EventsListOptions{Filters: make(client.Filters).Add("type", string(events.ImageEventType))})
	return relayEvents(ctx, res, func(msg events.Message) runtime.ImageEvent {
		ev := runtime.ImageEvent{Ref: msg.Actor.ID, Action: string(msg.Action)}
		if name := msg.Actor.Attributes["name"]; name != "" {
			ev.Ref = name
		}
		return ev
	})
}

// StreamStats sends a resource sample of a running container about once a
// second (Docker's own collector interval) to fn, until ctx is done or the
// container stops; it returns nil then. One stream costs the daemon one
// cgroup read a second, less than a one-shot request for each sample.
func (c *Client) StreamStats(ctx context.Context, id string, fn func(runtime.StatsSample)) error {
	op := "stream stats of container " + id
	res, err := c.api.ContainerStats(ctx, id, client.ContainerStatsOptions{Stream: true})
	if err != nil {
		return wrap(op, err)
	}
	defer res.Body.Close()
	dec := json.NewDecoder(res.Body)
	for {
		var s container.StatsResponse
		if err := dec.Decode(&s); err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return wrap(op, err)
		}
		fn(sampleOf(s))
	}
}

func sampleOf(s container.StatsResponse) runtime.StatsSample {
	return runtime.StatsSample{
		Read:        s.Read,
		CPUTotal:    s.CPUStats.CPUUsage.TotalUsage,
		SystemCPU:   s.CPUStats.SystemUsage,
		OnlineCPUs:  s.CPUStats.OnlineCPUs,
		MemoryUsage: s.MemoryStats.Usage,
		MemoryLimit: s.MemoryStats.Limit,
		MemoryStats: s.MemoryStats.Stats,
		Pids:        s.PidsStats.Current,
	}
}

// TagImage gives the local image src the reference ref as well.
func (c *Client) TagImage(ctx context.Context, src, ref string) error {
	_, err := c.api.ImageTag(ctx, client.ImageTagOptions{Source: src, Target: ref})
	return wrap(fmt.Sprintf("tag image %s as %s", src, ref), err)
}
