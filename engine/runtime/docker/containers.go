package docker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// noNewPrivileges stops setuid binaries and file capabilities from raising a
// process's privileges inside a sandbox.
const noNewPrivileges = "no-new-privileges"

// Create creates (but does not start) a sandbox container and returns its id.
//
// Whatever o says, the container gets the fixed hardening: every capability
// dropped (then o.CapAdd added back), no-new-privileges, Docker's default
// seccomp profile, not privileged, an init as PID 1 (so orphans are reaped and
// signals delivered: docker-init, or o.Cmd itself when o.Attached), restart
// policy "no", no binds or volumes (each VOLUME the image declares is covered
// by a small tmpfs, see tmpfsMounts), no health check, no TTY and no stdin
// (unless o.Attached), and NVIDIA_VISIBLE_DEVICES=void when o.GPUs is 0
// (see gpuEnv). Memory and swap are limited to the same value,
// so the sandbox never swaps. A container without a memory, CPU (at least
// 0.01 CPUs) or pids limit is refused with sandbox.ErrInvalid: Docker would
// read a zero as no limit. An empty Network means "none"; "bridge" means
// BridgeNetwork, made on demand.
//
// When o.Cmd is set, the image's entrypoint is cleared so that o.Cmd is the
// main process as given: work runs through Exec, never through whatever the
// image's entrypoint would start.
//
// o.User is resolved once, against the image's own files, to numeric ids
// (see resolveUser); one that means uid 0 or that the image does not have
// fails with sandbox.ErrInvalid. When o.User and o.Workdir are both set, the
// workdir is made owned by the user (see ownWorkdir), unless a tmpfs covers
// it. A container Create cannot finish is removed.
func (c *Client) Create(ctx context.Context, o runtime.CreateOptions) (string, error) {
	op := fmt.Sprintf("create container from image %s", o.Image)
	if err := c.resolveGPUs(ctx, &o); err != nil {
		return "", err
	}
	if err := checkLimits(o); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	volumes, err := c.imageVolumes(ctx, o.Image)
	if err != nil {
		return "", err
	}
	if o.User, err = c.resolveUser(ctx, o); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if o.Network == sandbox.NetworkBridge {
		if err := c.ensureBridge(ctx); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
	}
	if o.Agent != nil {
		if err := c.ensureAgent(ctx, o.Agent, o.Image, o.Labels); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
	}
	hc := hostConfig(o)
	uid, gid, _ := strings.Cut(o.User, ":")
	hc.Tmpfs = tmpfsMounts(o, volumes, uid, gid)
	res, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:       o.Name,
		Config:     containerConfig(o),
		HostConfig: hc,
	})
	if err != nil {
		return "", wrap(op, err)
	}
	if _, onTmpfs := hc.Tmpfs[path.Clean(o.Workdir)]; o.User != "" && o.Workdir != "" && !onTmpfs {
		if err := c.ownWorkdir(ctx, res.ID, o.User, o.Workdir); err != nil {
			rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			return "", errors.Join(fmt.Errorf("%s: %w", op, err), c.Remove(rmCtx, res.ID))
		}
	}
	return res.ID, nil
}

func containerConfig(o runtime.CreateOptions) *container.Config {
	cfg := &container.Config{
		Image:       o.Image,
		Labels:      o.Labels,
		Env:         gpuEnv(o),
		WorkingDir:  o.Workdir,
		Cmd:         o.Cmd,
		Hostname:    o.Hostname,
		User:        o.User,
		Healthcheck: noHealthcheck,
	}
	if o.Attached {
		cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr = true, true, true
		cfg.OpenStdin, cfg.StdinOnce = true, true
	}
	if o.Agent != nil {
		cfg.Cmd = []string{runtime.AgentPath, "init"}
	}
	if len(cfg.Cmd) > 0 {
		// A non-nil empty entrypoint overrides the image's (docker run --entrypoint "").
		cfg.Entrypoint = []string{}
	}
	return cfg
}

func hostConfig(o runtime.CreateOptions) *container.HostConfig {
	network := o.Network
	if network == "" {
		network = "none"
	}
	withInit := !o.Attached && o.Agent == nil // see CreateOptions.Attached and Agent: then PID 1 is Cmd, or the agent
	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode(dockerNetwork(network)),
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyDisabled},
		CapDrop:        []string{"ALL"},
		CapAdd:         o.CapAdd,
		SecurityOpt:    []string{noNewPrivileges},
		Privileged:     false,
		Init:           &withInit,
		Runtime:        o.Runtime,
		ReadonlyRootfs: o.ReadOnlyRoot,
	}
	if o.Attached || o.Agent != nil {
		hc.LogConfig = container.LogConfig{Type: "none"}
	}
	if o.Agent != nil {
		hc.Mounts = append(hc.Mounts, agentMount(o.Agent))
	}
	if o.LinkDir != "" {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: o.LinkDir, Target: runtime.LinkDir, ReadOnly: true})
	}
	hc.DeviceRequests = deviceRequests(o.GPUs, o.GPUMethod)
	if o.MemoryMB > 0 {
		hc.Memory = o.MemoryMB << 20
		hc.MemorySwap = hc.Memory
	}
	hc.NanoCPUs = max(o.MilliCPUs, 0) * 1e6
	if o.PidsLimit > 0 {
		limit := o.PidsLimit
		hc.PidsLimit = &limit
	}
	if o.FileSizeMB > 0 {
		size := o.FileSizeMB << 20
		hc.Ulimits = []*container.Ulimit{{Name: "fsize", Soft: size, Hard: size}}
	}
	hc.Ulimits = append(hc.Ulimits, sandboxUlimits()...)
	return hc
}

// Start starts a created or stopped container; starting a running one is a no-op.
func (c *Client) Start(ctx context.Context, id string) error {
	_, err := c.api.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return wrap("start container "+id, err)
}

// Stop sends the container's stop signal and kills it after timeout (rounded
// up to whole seconds, as the API counts them). Stopping a stopped container
// is a no-op.
func (c *Client) Stop(ctx context.Context, id string, timeout time.Duration) error {
	secs := int(math.Ceil(max(timeout, 0).Seconds()))
	_, err := c.api.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &secs})
	return wrap("stop container "+id, err)
}

// Kill sends SIGKILL to the container's main process. Killing a container
// that is not running fails with sandbox.ErrConflict.
func (c *Client) Kill(ctx context.Context, id string) error {
	_, err := c.api.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"})
	return wrap("kill container "+id, err)
}

// Signal sends sig ("SIGSTOP", "SIGCONT", …) to the container's PID 1 from
// outside, through Docker: from the host's side, where SIGSTOP reaches even
// a container's init, which no process inside can stop. A container that is
// not running fails with sandbox.ErrConflict.
func (c *Client) Signal(ctx context.Context, id, sig string) error {
	_, err := c.api.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: sig})
	return wrap("signal "+sig+" to container "+id, err)
}

// Remove force-removes a container, running or not, with its anonymous
// volumes. A container that does not exist counts as removed.
func (c *Client) Remove(ctx context.Context, id string) error {
	_, err := c.api.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	c.users.forget(id)
	c.tmpfs.forget(id)
	err = wrap("remove container "+id, err)
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	return err
}

// Rename gives a container a new name. A name another container has is
// sandbox.ErrConflict, and the container keeps its old name.
func (c *Client) Rename(ctx context.Context, id, name string) error {
	_, err := c.api.ContainerRename(ctx, id, client.ContainerRenameOptions{NewName: name})
	return wrap(fmt.Sprintf("rename container %s to %s", id, name), err)
}

// Inspect reports a container by id or name.
func (c *Client) Inspect(ctx context.Context, id string) (runtime.Container, error) {
	res, err := c.api.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return runtime.Container{}, wrap("inspect container "+id, err)
	}
	r := res.Container
	ctr := runtime.Container{ID: r.ID, Name: strings.TrimPrefix(r.Name, "/"), ImageID: r.Image}
	ctr.Created, _ = time.Parse(time.RFC3339Nano, r.Created)
	if r.Config != nil {
		ctr.Image, ctr.Labels = r.Config.Image, r.Config.Labels
	}
	if r.State != nil {
		ctr.State, ctr.ExitCode, ctr.OOMKilled = runtime.State(r.State.Status), r.State.ExitCode, r.State.OOMKilled
		ctr.StartedAt, _ = time.Parse(time.RFC3339Nano, r.State.StartedAt)
		ctr.Pid = r.State.Pid
	}
	if r.HostConfig != nil {
		ctr.ReadOnlyRoot = r.HostConfig.ReadonlyRootfs
		ctr.Init = r.HostConfig.Init != nil && *r.HostConfig.Init
	}
	for _, m := range r.Mounts {
		if m.Destination == runtime.AgentDir && !m.RW {
			ctr.Agent = true
		}
	}
	if r.NetworkSettings != nil {
		for name := range r.NetworkSettings.Networks {
			ctr.Networks = append(ctr.Networks, sandboxNetwork(name))
		}
		slices.Sort(ctr.Networks)
	}
	return ctr, nil
}

// InspectRaw returns Docker's inspect document for a container as JSON, for
// the GUI's details pane and for tests that check HostConfig without
// importing the SDK.
func (c *Client) InspectRaw(ctx context.Context, id string) ([]byte, error) {
	res, err := c.api.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, wrap("inspect container "+id, err)
	}
	return res.Raw, nil
}

// List reports the containers carrying every given label ("key" with value
// "" only needs the key to be present); all includes stopped ones. Docker's
// list does not carry exit codes, so ExitCode and OOMKilled are left zero:
// Inspect has them.
func (c *Client) List(ctx context.Context, labels map[string]string, all bool) ([]runtime.Container, error) {
	res, err := c.api.ContainerList(ctx, client.ContainerListOptions{All: all, Filters: labelFilters(labels)})
	if err != nil {
		return nil, wrap("list containers", err)
	}
	out := make([]runtime.Container, 0, len(res.Items))
	for _, s := range res.Items {
		ctr := runtime.Container{
			ID:      s.ID,
			Image:   s.Image,
			ImageID: s.ImageID,
			Labels:  s.Labels,
			State:   runtime.State(s.State),
			Created: time.Unix(s.Created, 0),
		}
		if len(s.Names) > 0 {
			ctr.Name = strings.TrimPrefix(s.Names[0], "/")
		}
		out = append(out, ctr)
	}
	return out, nil
}

// labelFilters turns labels into Docker "label" filters, which Docker ANDs.
func labelFilters(labels map[string]string) client.Filters {
	f := make(client.Filters)
	for k, v := range labels {
		if v == "" {
			f.Add("label", k)
		} else {
			f.Add("label", k+"="+v)
		}
	}
	return f
}

// ConnectNetwork attaches a container to a network ("bridge" is
// BridgeNetwork, made on demand; see dockerNetwork). Docker
// refuses to attach a container that is on network "none" to anything else
// (sandbox.ErrInvalid: "cannot be connected to multiple networks with one of
// the networks in private (none) mode"), so callers disconnect "none" first.
// Attaching to a network the container is already on is sandbox.ErrConflict
// on some daemons and silently accepted on others; callers check Networks.
func (c *Client) ConnectNetwork(ctx context.Context, id, network string) error {
	if network == sandbox.NetworkBridge {
		if err := c.ensureBridge(ctx); err != nil {
			return err
		}
	}
	_, err := c.api.NetworkConnect(ctx, dockerNetwork(network), client.NetworkConnectOptions{Container: id})
	return wrap(fmt.Sprintf("connect container %s to network %s", id, network), err)
}

// DisconnectNetwork detaches a container from a network. The container's
// HostConfig.NetworkMode does not change, so a container created with "none"
// still reports "none" there; Container.Networks tells what it is on now.
func (c *Client) DisconnectNetwork(ctx context.Context, id, network string) error {
	_, err := c.api.NetworkDisconnect(ctx, dockerNetwork(network), client.NetworkDisconnectOptions{Container: id})
	return wrap(fmt.Sprintf("disconnect container %s from network %s", id, network), err)
}
