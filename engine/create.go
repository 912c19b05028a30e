package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/internal/network"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// createContainer creates and starts a sandbox from spec on demand (the cold
// path; engine/internal/pool has the warm one), and starts its kernel. Its
// PID 1 is the agent (see engine/internal/execgate); on Docker's own engine
// the engine attaches to the agent's stdin and stdout before the start, and
// that is the sandbox's session, so no docker exec is paid for it. from is
// what a fork takes over from its original (its egress rules, package
// manifest and what its image carries): the sandbox has it from the start,
// on the egress gate too.
func (e *Engine) createContainer(ctx context.Context, owner sandbox.Owner, spec sandbox.Spec, from boxState) (sandbox.Info, error) {
	now := time.Now().UTC()
	labels, err := e.cfg().sandboxLabels(spec, now)
	if err != nil {
		return sandbox.Info{}, err
	}
	opts := e.cfg().createOptions(e.cfg().containerName(spec.Name), spec.Name, spec, labels)
	opts.Attached = e.attachFirst && spec.Runtime == "" && !e.execs.Linking() // a link replaces the attachment
	id, err := e.docker.Create(ctx, opts)
	if errors.Is(err, sandbox.ErrConflict) {
		return sandbox.Info{}, fmt.Errorf("a sandbox named %q already exists; pick another name or use that one: %w", spec.Name, sandbox.ErrConflict)
	}
	if errors.Is(err, sandbox.ErrInvalid) && spec.User != "" {
		// Most likely the user: a name the image lacks. Say where it is set.
		return sandbox.Info{}, fmt.Errorf("create sandbox as user %q (sandbox.user in Sandtray's config): %w", spec.User, err)
	}
	if err != nil {
		return sandbox.Info{}, fmt.Errorf("create sandbox: %w", err)
	}
	var att io.ReadWriteCloser
	if opts.Attached {
		if att, err = e.docker.Attach(ctx, id); err != nil {
			// The agent then serves no one on its stdin; the session is
			// an exec, made on first use.
			e.log.Warn("attach to a new sandbox's agent", "id", sandbox.ShortID(id), "err", err)
		}
	}
	if err := e.startOrRemove(ctx, id, spec.Image); err != nil {
		if att != nil {
			att.Close()
		}
		return sandbox.Info{}, err
	}
	if att != nil {
		e.attachSession(ctx, id, att)
	}
	st := boxState{Persistent: spec.Persistent, Owner: owner, LastUsed: now, Egress: from.Egress, Packages: from.Packages, Inherited: from.Inherited}
	// The kernel first: its start is the first call's longest wait, and the
	// state write, the log and the reply overlap it.
	e.warmPart.WarmSoon(id, spec) // see engine/internal/pool
	info := e.register(owner, id, spec, now, st)
	return info, e.networkPart.EgressOrRemove(ctx, owner, id)
}

// attachSession starts the session with a new sandbox's agent on its
// attachment; one that fails leaves the session to an exec, on first use.
func (e *Engine) attachSession(ctx context.Context, id string, conn io.ReadWriteCloser) {
	s, err := agentclient.New(ctx, conn, e.log.With("sandbox", sandbox.ShortID(id)))
	if err != nil {
		e.log.Warn("start the session with a new sandbox's agent", "id", sandbox.ShortID(id), "err", err)
		return
	}
	e.execs.SetSession(id, s)
}

// sandboxLabels are the immutable labels of a new container made from spec:
// its name only when spec has one (pooled containers get theirs later, see
// pool.go), the engine's identity and its own labels.
func (c *settings) sandboxLabels(spec sandbox.Spec, created time.Time) (map[string]string, error) {
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		sandbox.LabelManaged: "true", sandbox.LabelImage: spec.Image,
		sandbox.LabelCreated: created.Format(time.RFC3339Nano), sandbox.LabelSpec: string(specJSON),
		sandbox.LabelEngine: c.engine,
	}
	if spec.Name != "" {
		labels[sandbox.LabelName] = spec.Name
	}
	maps.Copy(labels, c.labels)
	return labels, nil
}

// createOptions is the hardened container for spec; Create adds the fixed
// hardening (see docker.Client.Create), and makes the workdir owned by
// spec.User when there is one. No one file may outgrow limits.disk_mb (the
// engine bounds the total, see run.Runner.WatchDisk, but only as often as it measures).
func (c *settings) createOptions(containerName, hostname string, spec sandbox.Spec, labels map[string]string) runtime.CreateOptions {
	return c.harden(runtime.CreateOptions{
		Name: containerName, Image: spec.Image, Labels: labels, Env: containerEnv(spec),
		Workdir: spec.Workdir, Network: dockerNetwork(spec.Network), Agent: c.agent,
		MemoryMB: spec.MemoryMB, MilliCPUs: runtime.MilliCPUs(spec.CPUs), PidsLimit: spec.PidsLimit,
		CapAdd: spec.CapAdd, Runtime: spec.Runtime, Hostname: hostname, User: spec.User,
		FileSizeMB: c.Limits.DiskMB, GPUs: gpuCount(spec),
	})
}

// harden adds the profile's container settings to o (the engine calls
// it for every container it makes): in the strict profile a
// read-only root, with tmpfs for the workdir and /tmp, each at most
// sandbox.tmpfs_mb and the sandbox's memory (tmpfs pages count in it), and
// HOME in the workdir, the one place the user can write.
func (c *settings) harden(o runtime.CreateOptions) runtime.CreateOptions {
	if c.Sandbox.Profile != config.ProfileStrict {
		return o
	}
	size := min(c.Sandbox.TmpfsMB, o.MemoryMB)
	o.ReadOnlyRoot = true
	o.Tmpfs = map[string]int64{o.Workdir: size, "/tmp": size}
	if !slices.ContainsFunc(o.Env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		o.Env = append(slices.Clip(o.Env), "HOME="+o.Workdir)
	}
	return o
}

// containerEnv is spec's env, with the proxy's and the secrets' for an
// egress sandbox (network.Env).
func containerEnv(spec sandbox.Spec) []string {
	return append(sandbox.EnvList(spec.Env), network.Env(spec)...)
}

// dockerNetwork is the container's network for a sandbox's: an egress
// sandbox's container has none at all (loopback only).
func dockerNetwork(n string) string {
	if n == sandbox.NetworkEgress {
		return sandbox.NetworkNone
	}
	return n
}

// startOrRemove starts a new container, removing it when it fails to start
// so that nothing half-made is left behind.
func (e *Engine) startOrRemove(ctx context.Context, id, image string) error {
	err := e.docker.Start(ctx, id)
	if err == nil {
		return nil
	}
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if rmErr := e.docker.Remove(rmCtx, id); rmErr != nil {
		e.log.Error("remove sandbox that failed to start", "id", sandbox.ShortID(id), "err", rmErr)
	}
	return fmt.Errorf("start sandbox from image %s: %w", image, err)
}

// register makes a started container a sandbox of the engine: its state is
// saved, it is listed, and its log starts with its creation.
func (e *Engine) register(owner sandbox.Owner, id string, spec sandbox.Spec, created time.Time, st boxState) sandbox.Info {
	e.store.SaveStateOrWarn(e.log, id, st)
	return e.list(owner, id, spec, created, st)
}

// list is register once the state is saved: the sandbox is listed, and
// its log starts with its creation.
func (e *Engine) list(owner sandbox.Owner, id string, spec sandbox.Spec, created time.Time, st boxState) sandbox.Info {
	b := &box{ID: id, Name: spec.Name, Spec: spec, Created: created, Status: sandbox.StatusRunning, State: st}
	var info sandbox.Info
	e.reg.Locked(func() {
		e.reg.BoxesLocked()[id] = b
		info = b.Info(e.ports.Forwards(b.ID), e.stats.Of(b.ID))
	})
	e.record(id, sandbox.Activity{Tool: "create_sandbox", Client: owner.Client, Input: spec.Image})
	e.publish()
	return info
}
