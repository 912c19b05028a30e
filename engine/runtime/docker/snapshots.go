package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/client"
)

// Pause freezes every process of a container (its cgroup's freezer): a
// snapshot's commit sees its files as they are at one moment. Pause only a
// container no exec is joining (the engine holds new execs first): an exec
// whose runc is still joining a frozen cgroup wedges the container in the
// daemon (see Commit).
//
// The cgroup freezer gives up on a task it cannot freeze at once (one in
// the middle of an uninterruptible read, as through fuse-overlayfs), and
// runc says "unable to freeze": the pause is tried again, a few times.
func (c *Client) Pause(ctx context.Context, id string) error {
	var err error
	for try := 0; try < 4; try++ {
		if _, err = c.api.ContainerPause(ctx, id, client.ContainerPauseOptions{}); err == nil || !strings.Contains(err.Error(), "unable to freeze") {
			break
		}
		select {
		case <-ctx.Done():
			return wrap("pause container "+id, err)
		case <-time.After(time.Duration(try+1) * 100 * time.Millisecond):
		}
	}
	return wrap("pause container "+id, err)
}

// Unpause thaws a container Pause froze.
func (c *Client) Unpause(ctx context.Context, id string) error {
	_, err := c.api.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	return wrap("unpause container "+id, err)
}

// ImagesLabeled lists the local images that carry every label of labels
// with its value.
func (c *Client) ImagesLabeled(ctx context.Context, labels map[string]string) ([]runtime.LabeledImage, error) {
	f := make(client.Filters)
	for k, v := range labels {
		f = f.Add("label", k+"="+v)
	}
	res, err := c.api.ImageList(ctx, client.ImageListOptions{Filters: f})
	if err != nil {
		return nil, wrap("list images", err)
	}
	out := make([]runtime.LabeledImage, 0, len(res.Items))
	for _, s := range res.Items {
		out = append(out, runtime.LabeledImage{ID: s.ID, RepoTags: s.RepoTags, Labels: s.Labels, Created: time.Unix(s.Created, 0).UTC(), Size: s.Size})
	}
	return out, nil
}

// TmpfsMounts lists a container's tmpfs mount points, sorted: what its
// writable layer (diff, commit, export) does not hold.
func (c *Client) TmpfsMounts(ctx context.Context, id string) ([]string, error) {
	raw, err := c.InspectRaw(ctx, id)
	if err != nil {
		return nil, err
	}
	var doc struct {
		HostConfig struct{ Tmpfs map[string]string }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("read the tmpfs mounts of container %s: %w", id, err)
	}
	out := make([]string, 0, len(doc.HostConfig.Tmpfs))
	for m := range doc.HostConfig.Tmpfs {
		out = append(out, path.Clean(m))
	}
	slices.Sort(out)
	return out, nil
}

// ImageSize is the size of a local image, its base's layers included.
func (c *Client) ImageSize(ctx context.Context, ref string) (int64, error) {
	res, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return 0, wrap("inspect image "+ref, err)
	}
	return res.Size, nil
}
