package docker

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// minMilliCPUs is the smallest CPU limit Docker accepts (0.01 CPUs); a
// limit of 0 would mean no limit at all.
const minMilliCPUs = 10

// volumeTmpfsMB is the size of the tmpfs that covers each VOLUME an image
// declares, at most the sandbox's memory limit (tmpfs pages count in it).
const volumeTmpfsMB = 256

// checkLimits refuses a container without a CPU, memory or pids limit:
// Docker reads a zero as "unlimited", so a zero that slipped through the
// engine's checks would lift the limit instead of failing.
func checkLimits(o runtime.CreateOptions) error {
	switch {
	case o.MemoryMB <= 0:
		return fmt.Errorf("memory limit %d MB: every sandbox needs a memory limit: %w", o.MemoryMB, sandbox.ErrInvalid)
	case o.MilliCPUs < minMilliCPUs:
		return fmt.Errorf("CPU limit %g CPUs: every sandbox needs one of at least 0.01 CPUs: %w", float64(o.MilliCPUs)/1000, sandbox.ErrInvalid)
	case o.PidsLimit <= 0:
		return fmt.Errorf("pids limit %d: every sandbox needs a pids limit: %w", o.PidsLimit, sandbox.ErrInvalid)
	}
	return nil
}

// noHealthcheck turns off whatever HEALTHCHECK the image has: it would run a
// command in the sandbox every interval, outside any call.
var noHealthcheck = &container.HealthConfig{Test: []string{"NONE"}}

// tmpfsMounts is the HostConfig.Tmpfs of a sandbox: o.Tmpfs, and a tmpfs
// over every VOLUME the image declares that o.Tmpfs does not already cover.
// Docker makes no volume for a path that has a tmpfs, so an image's volume
// never becomes a Docker volume (outside the disk limit and outside the
// writable layer that diff, commit and export read). Each tmpfs is owned by
// uid:gid (numeric, or "" for root), mode 0755 for the image's volumes and
// 01777 for /tmp.
func tmpfsMounts(o runtime.CreateOptions, imageVolumes []string, uid, gid string) map[string]string {
	if len(o.Tmpfs) == 0 && len(imageVolumes) == 0 {
		return nil
	}
	out := make(map[string]string, len(o.Tmpfs)+len(imageVolumes))
	for _, p := range slices.Sorted(maps.Keys(o.Tmpfs)) {
		out[path.Clean(p)] = tmpfsOptions(o.Tmpfs[p], p, uid, gid)
	}
	size := min(int64(volumeTmpfsMB), max(o.MemoryMB, 1))
	for _, v := range imageVolumes {
		if p := path.Clean(v); out[p] == "" {
			out[p] = tmpfsOptions(size, p, uid, gid)
		}
	}
	return out
}

func tmpfsOptions(sizeMB int64, p, uid, gid string) string {
	opts := []string{"rw", "nosuid", "nodev", fmt.Sprintf("size=%dm", max(sizeMB, 1))}
	if p == "/tmp" {
		return strings.Join(append(opts, "mode=1777"), ",")
	}
	opts = append(opts, "mode=755")
	if uid != "" {
		opts = append(opts, "uid="+uid, "gid="+gid)
	}
	return strings.Join(opts, ",")
}

// imageVolumes lists the VOLUMEs image declares.
func (c *Client) imageVolumes(ctx context.Context, image string) ([]string, error) {
	res, err := c.api.ImageInspect(ctx, image)
	if err != nil {
		return nil, wrap("inspect image "+image, err)
	}
	if res.Config == nil {
		return nil, nil
	}
	return slices.Sorted(maps.Keys(res.Config.Volumes)), nil
}

// resolveUser is o.User as numeric "uid:gid" (or "" for the image's user).
// Numeric ids are taken as they are; a name, or a uid without a group, is
// looked up in the image's own files through a container that is created
// for that and never started (see numericUser). Uid 0 is refused.
func (c *Client) resolveUser(ctx context.Context, o runtime.CreateOptions) (string, error) {
	if o.User == "" {
		return "", nil
	}
	name, group, _ := strings.Cut(o.User, ":")
	uid, uidErr := parseID(name)
	_, gidErr := parseID(group)
	if uidErr == nil && gidErr == nil {
		if uid == 0 {
			return "", fmt.Errorf("user %q is uid 0 (root); give the ids of a user that is not root, such as \"1000:1000\": %w", o.User, sandbox.ErrInvalid)
		}
		return o.User, nil
	}
	labels := map[string]string{}
	if v, ok := o.Labels[sandbox.LabelTest]; ok {
		labels[sandbox.LabelTest] = v // so a test's cleanup finds it
	}
	res, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: o.Image, Cmd: []string{"true"}, Entrypoint: []string{}, Labels: labels},
		HostConfig: &container.HostConfig{NetworkMode: "none", CapDrop: []string{"ALL"}},
	})
	if err != nil {
		return "", wrap("create a container to look up user "+o.User, err)
	}
	defer func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = c.Remove(rmCtx, res.ID)
	}()
	return c.numericUser(ctx, res.ID, o.User)
}

// numericUser resolves o.User against the image's own /etc/passwd and
// /etc/group (through a created container, see UserIDs) to "uid:gid", so that
// Docker never looks the name up again: it would at every exec, and root in
// the sandbox may rewrite /etc/passwd to map the name to uid 0. A user that
// resolves to uid 0 is refused: sandbox.user is there to not be root.
func (c *Client) numericUser(ctx context.Context, id, user string) (string, error) {
	uid, gid, err := c.UserIDs(ctx, id, user)
	if err != nil {
		return "", err
	}
	if uid == 0 {
		return "", fmt.Errorf("user %q is uid 0 (root) in the image; name a user that is not root, or give numeric ids such as \"1000:1000\": %w", user, sandbox.ErrInvalid)
	}
	return strconv.Itoa(uid) + ":" + strconv.Itoa(gid), nil
}
