package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The agent reaches every sandbox on a Docker volume of its own, one per
// build of it (sandtray-agent-<digest>), mounted read-only at
// runtime.AgentDir: a volume lives on the daemon's side, so this works with
// a remote daemon (ssh://) and with Podman as with a local Docker, and no
// process in a container (root included: no CAP_SYS_ADMIN to remount it)
// can write to it. The volume is filled once, through a container created
// (never started) from the sandbox's own image, so nothing but Docker and
// the image is needed: no shell, no python, no registry. Engines on one
// daemon share the volume of a build; the fill takes a lock that is a
// container name, so two never fill one volume at once, and a volume is
// used only once its ready mark, written after the agent, is there. A
// volume is never removed: it is a few MB, and another engine, or a
// container, may use it.

// agentLabel marks an agent volume with the digest of the agent it holds.
const agentLabel = "io.sandtray.agent"

// fillStale is how old a fill lock may get before another engine takes it
// over (the engine that held it died).
const fillStale = 2 * time.Minute

// agentVolumes remembers which volumes this client has seen ready.
type agentVolumes struct {
	fill  sync.Mutex // one fill at a time in this process: the lock is between engines
	mu    sync.Mutex
	ready map[string]bool // guarded by mu: volume name → ready
}

func agentVolume(a *runtime.Agent) string { return "sandtray-agent-" + a.Digest[:16] }

// agentMount is the read-only mount of a's volume.
func agentMount(a *runtime.Agent) mount.Mount {
	return mount.Mount{Type: mount.TypeVolume, Source: agentVolume(a), Target: runtime.AgentDir, ReadOnly: true,
		VolumeOptions: &mount.VolumeOptions{NoCopy: true}}
}

// ensureAgent makes sure a's volume holds it, filling it through a
// container of image when it does not yet.
func (c *Client) ensureAgent(ctx context.Context, a *runtime.Agent, image string, labels map[string]string) error {
	if len(a.Digest) < 16 || len(a.Binary) == 0 {
		return fmt.Errorf("no sandbox agent given: %w", sandbox.ErrInvalid)
	}
	name := agentVolume(a)
	c.agents.mu.Lock()
	ready := c.agents.ready[name]
	c.agents.mu.Unlock()
	if ready {
		return nil
	}
	c.agents.fill.Lock()
	defer c.agents.fill.Unlock()
	c.agents.mu.Lock()
	ready = c.agents.ready[name] // another goroutine filled it meanwhile
	c.agents.mu.Unlock()
	if ready {
		return nil
	}
	if _, err := c.api.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: map[string]string{agentLabel: a.Digest}}); err != nil {
		return wrap("create the agent's volume "+name, err)
	}
	deadline := time.Now().Add(fillStale + 30*time.Second)
	for {
		done, err := c.fillAgent(ctx, a, image, labels)
		if err != nil {
			return fmt.Errorf("put the sandbox agent on volume %s: %w", name, err)
		}
		if done {
			c.agents.mu.Lock()
			if c.agents.ready == nil {
				c.agents.ready = map[string]bool{}
			}
			c.agents.ready[name] = true
			c.agents.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another engine has been filling volume %s for minutes: %w", name, sandbox.ErrUnavailable)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fillAgent takes the fill lock (a container named after the volume, with
// the volume mounted writable) and, holding it, fills the volume unless it
// is ready. done is false when another engine holds the lock.
func (c *Client) fillAgent(ctx context.Context, a *runtime.Agent, image string, labels map[string]string) (done bool, err error) {
	lock := "sandtray-agent-fill-" + a.Digest[:16]
	fillLabels := map[string]string{agentLabel: a.Digest}
	if v, ok := labels[sandbox.LabelTest]; ok {
		fillLabels[sandbox.LabelTest] = v // so a test's cleanup finds it
	}
	res, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: lock,
		Config: &container.Config{Image: image, Cmd: []string{runtime.AgentPath}, Entrypoint: []string{},
			Labels: fillLabels, NetworkDisabled: true},
		HostConfig: &container.HostConfig{NetworkMode: "none", CapDrop: []string{"ALL"},
			Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: agentVolume(a), Target: "/fill",
				VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}},
	})
	if err != nil {
		// Held by another engine (Docker says so with a 409, Podman with
		// a 500 and words, and the lock's name is taken), or it was a
		// moment ago: look again.
		if _, ierr := c.api.ContainerInspect(ctx, lock, client.ContainerInspectOptions{}); ierr == nil || errors.Is(wrap("", err), sandbox.ErrConflict) {
			c.dropStaleLock(ctx, lock)
			return false, nil
		}
		return false, wrap("create the agent volume's fill container", err)
	}
	defer func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = c.Remove(rmCtx, res.ID)
	}()
	if _, err := c.statRaw(ctx, res.ID, "/fill/.ready"); err == nil {
		return true, nil
	}
	if err := c.copyRaw(ctx, res.ID, "/fill", agentTar(path.Base(runtime.AgentPath), a.Binary, 0o555)); err != nil {
		return false, err
	}
	st, err := c.statRaw(ctx, res.ID, "/fill/"+path.Base(runtime.AgentPath))
	if err != nil {
		return false, err
	}
	if st.Size != int64(len(a.Binary)) {
		return false, fmt.Errorf("the agent on the volume has %d bytes, not %d", st.Size, len(a.Binary))
	}
	if err := c.copyRaw(ctx, res.ID, "/fill", agentTar(".ready", []byte(a.Digest+"\n"), 0o444)); err != nil {
		return false, err
	}
	return true, nil
}

// dropStaleLock removes a fill lock older than fillStale: its engine died.
func (c *Client) dropStaleLock(ctx context.Context, lock string) {
	res, err := c.api.ContainerInspect(ctx, lock, client.ContainerInspectOptions{})
	if err != nil {
		return
	}
	created, err := time.Parse(time.RFC3339Nano, res.Container.Created)
	if err == nil && time.Since(created) > fillStale {
		_ = c.Remove(ctx, res.Container.ID)
	}
}

// statRaw and copyRaw are Docker's archive API itself, which sees a
// volume mounted in a container that never ran.
func (c *Client) statRaw(ctx context.Context, id, p string) (runtime.PathStat, error) {
	res, err := c.api.ContainerStatPath(ctx, id, client.ContainerStatPathOptions{Path: p})
	if err != nil {
		return runtime.PathStat{}, wrap("stat "+p, err)
	}
	return runtime.PathStat{Name: res.Stat.Name, Size: res.Stat.Size, Mode: uint32(res.Stat.Mode)}, nil
}

func (c *Client) copyRaw(ctx context.Context, id, dir string, tarball []byte) error {
	_, err := c.api.CopyToContainer(ctx, id, client.CopyToContainerOptions{DestinationPath: dir, Content: bytes.NewReader(tarball)})
	return wrap("copy into "+dir, err)
}

// agentTar is a tar of one root-owned file.
func agentTar(name string, data []byte, mode int64) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)})
	_, _ = tw.Write(data)
	_ = tw.Close()
	return buf.Bytes()
}
