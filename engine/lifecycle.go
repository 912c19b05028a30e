package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/probe"
	"github.com/sandtray/sandtray/engine/internal/registry"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

var (
	validName   = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)
	validEnvKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// containerPrefix keeps Sandtray's container names apart from the user's own.
const containerPrefix = "sandtray-"

// Create makes and starts a new sandbox for owner. A missing image is pulled
// when a registry answers, with progress; otherwise the error names the image.
// A container that fails to start is removed, never left behind.
func (e *Engine) Create(ctx context.Context, owner sandbox.Owner, req sandbox.CreateRequest, progress sandbox.Progress) (sandbox.Info, error) {
	if err := e.reg.Enter(); err != nil { // a create is a call: Close waits for it
		return sandbox.Info{}, err
	}
	defer e.reg.Leave()
	var paused bool
	e.reg.Locked(func() { paused = e.paused })
	ctx, cancel := e.reg.Bound(ctx)
	defer cancel()
	if paused {
		return sandbox.Info{}, fmt.Errorf("new sandboxes are paused by the user in the Sandtray tray menu; ask them to resume, or use an existing sandbox: %w", sandbox.ErrPaused)
	}
	spec, err := e.newSpec(req)
	if err != nil {
		return sandbox.Info{}, err
	}
	done, err := e.reg.Reserve(e.cfg().Limits.MaxSandboxes)
	if err != nil {
		return sandbox.Info{}, err
	}
	defer done()
	if err := e.nameFree(spec.Name); err != nil {
		return sandbox.Info{}, err
	}
	if err := probe.CheckGPUs(ctx, e.cfg().GPU, e.docker, spec); err != nil {
		return sandbox.Info{}, err
	}
	// The pool's spares are made without the proxy's environment: an
	// egress sandbox is always made on demand.
	if spec.Network != sandbox.NetworkEgress {
		if info, ok, err := e.warmPart.CreateFromPool(ctx, owner, spec, req.Name != ""); ok || err != nil {
			if err == nil {
				e.warmPart.WarmPool().NoteUse(spec)
			}
			return info, err
		}
	}
	// Create first and look for the image only when Docker has none: one
	// round trip less on the cold path for the image that is there.
	info, err := e.createContainer(ctx, owner, spec, boxState{})
	if errors.Is(err, sandbox.ErrNotFound) {
		if err := e.imagesPart.EnsureImage(ctx, spec.Image, progress); err != nil {
			return sandbox.Info{}, err
		}
		info, err = e.createContainer(ctx, owner, spec, boxState{})
	}
	if err == nil {
		e.warmPart.WarmPool().NoteUse(spec)
	}
	return info, err
}

// nameFree refuses a name one of the engine's sandboxes has. Names are per
// engine: Docker's name conflict covers the containers this engine made
// (their names carry its tag, see containerName), not one it adopted from
// an older Sandtray, named without it; another engine's never conflict.
func (e *Engine) nameFree(name string) error {
	taken := false
	e.reg.Locked(func() {
		for _, b := range e.reg.BoxesLocked() {
			taken = taken || b.Name == name
		}
	})
	if taken {
		return fmt.Errorf("a sandbox named %q already exists; pick another name or use that one: %w", name, sandbox.ErrConflict)
	}
	return nil
}

// newSpec is the spec of a new sandbox made from req under the config in
// force: create_sandbox's, and each fork's (F60). An egress sandbox gets
// the secrets' placeholders.
func (e *Engine) newSpec(req sandbox.CreateRequest) (sandbox.Spec, error) {
	spec, err := e.cfg().specFor(req)
	if err != nil {
		return spec, err
	}
	if spec.Network == sandbox.NetworkEgress {
		spec.Secrets = e.networkPart.SecretPlaceholders()
	}
	return spec, nil
}

// specFor fills a request's gaps from the config and checks it against the limits.
func (c *settings) specFor(req sandbox.CreateRequest) (sandbox.Spec, error) {
	lang := ""
	if req.Language != "" {
		l, err := run.LanguageFor(req.Language)
		if err != nil {
			return sandbox.Spec{}, err
		}
		lang = l.Name
	}
	spec := sandbox.Spec{
		Name: req.Name, Image: req.Image, Language: lang, Persistent: req.Persistent,
		Network: cmpOr(req.Network, c.Sandbox.Network), MemoryMB: cmpOr(req.MemoryMB, c.Limits.MemoryMB),
		CPUs: cmpOr(req.CPUs, c.Limits.CPUs), PidsLimit: c.Limits.Pids, Env: req.Env,
		Workdir: c.Sandbox.Workdir, Runtime: c.Sandbox.Runtime, CapAdd: c.Sandbox.CapAdd, User: c.Sandbox.User,
		GPUs: cmpOr(req.GPUs, c.GPU.Default),
	}
	if spec.Image == "" {
		spec.Image = c.ImageFor(lang)
	}
	if spec.Name == "" {
		spec.Name = "sb-" + sandbox.RandomHex(3)
	}
	switch {
	case !validName.MatchString(spec.Name):
		return spec, fmt.Errorf("name %q is not valid: use letters, digits, '.', '_' or '-', up to 63 characters: %w", spec.Name, sandbox.ErrInvalid)
	case !config.ValidNetwork(spec.Network):
		return spec, fmt.Errorf("network %q is not valid: use \"none\", \"egress\" or \"bridge\": %w", spec.Network, sandbox.ErrInvalid)
	}
	if err := c.SecureSpec(&spec); err != nil { // the strict profile's refusal first: it says more
		return spec, err
	}
	if spec.Network == sandbox.NetworkBridge && !c.Sandbox.AllowNetwork {
		return spec, fmt.Errorf("network \"bridge\" (the whole network, unfiltered) is turned off by the user's config (sandbox.allow_network = false); use network \"egress\": connections then go through Sandtray's egress gate, which allows the package indexes and what the user approves (request_network asks for a host with a reason): %w", sandbox.ErrForbidden)
	}
	if err := checkEnv("create_sandbox", spec.Env); err != nil {
		return spec, err
	}
	return spec, nil
}

func cmpOr[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}

// Stop stops a sandbox's container; its files stay, and the next call that
// needs it starts it again.
func (e *Engine) Stop(ctx context.Context, owner sandbox.Owner, ref string) (sandbox.Info, error) {
	b, err := e.reg.Acquire(ref)
	if err != nil {
		return sandbox.Info{}, err
	}
	defer e.release(b)
	// The container first, then its kernels: a first kernel on the
	// attachment is PID 1 and ends on SIGTERM at once, where closing it
	// first would have PID 1 turn into its shell as the SIGTERM arrives,
	// which could miss it (and the stop wait its 5 s).
	e.reg.Locked(func() { b.Stopping = true })
	err = e.docker.Stop(ctx, b.ID, 5*time.Second)
	e.kernels.Close(b.ID)
	e.reg.Locked(func() {
		b.Stopping = false
		if err == nil {
			b.Status = sandbox.StatusStopped
		}
	})
	if err != nil {
		return sandbox.Info{}, e.gone(b, fmt.Errorf("stop sandbox %s: %w", b.Name, err))
	}
	e.stats.Forget(b.ID)
	if e.ports.End(b.ID) {
		e.publish()
	}
	var info sandbox.Info
	e.reg.Locked(func() { info = b.Info(e.ports.Forwards(b.ID), e.stats.Of(b.ID)) })
	e.record(b.ID, sandbox.Activity{Tool: "stop_sandbox", Client: owner.Client})
	e.publish()
	return info, nil
}

// Kill stops a sandbox's container at once (SIGKILL to everything in it); its
// files stay, as with Stop.
func (e *Engine) Kill(ctx context.Context, ref string) error {
	b, err := e.reg.Acquire(ref)
	if err != nil {
		return err
	}
	defer e.release(b)
	e.jobs.StopIn(b.ID)
	e.kernels.Close(b.ID)
	if err := e.docker.Kill(ctx, b.ID); err != nil && !errors.Is(err, sandbox.ErrConflict) {
		return e.gone(b, fmt.Errorf("kill sandbox %s: %w", b.Name, err))
	}
	e.setStatus(b, sandbox.StatusStopped)
	e.record(b.ID, sandbox.Activity{Tool: "kill"})
	return nil
}

// Delete removes a sandbox, its container and everything stored about it.
func (e *Engine) Delete(ctx context.Context, owner sandbox.Owner, ref string) error {
	var b *box
	err := e.reg.WithRef(ref, func(found *box) error {
		if b = found; b.Stage == registry.Live {
			b.Stage = registry.Reaping // no new call starts in it; running ones are stopped below
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.jobs.StopIn(b.ID)
	if err := e.docker.Remove(ctx, b.ID); err != nil {
		e.reg.Unpick(b)
		return fmt.Errorf("delete sandbox %s: %w", b.Name, err)
	}
	e.forget(b.ID)
	return nil
}

// SetPersistent marks a sandbox persistent (kept across sessions and restarts)
// or ephemeral (removed after its session ends or it idles).
func (e *Engine) SetPersistent(ctx context.Context, owner sandbox.Owner, ref string, persistent bool) (sandbox.Info, error) {
	var b *box
	var st boxState
	var info sandbox.Info
	err := e.reg.WithRef(ref, func(found *box) error {
		b = found
		b.State.Persistent = persistent
		b.State.LastUsed = time.Now().UTC()
		st, info = b.State, b.Info(e.ports.Forwards(b.ID), e.stats.Of(b.ID))
		return nil
	})
	if err != nil {
		return sandbox.Info{}, err
	}
	if err := e.store.Save(b.ID, st); err != nil {
		return sandbox.Info{}, fmt.Errorf("save persistence of %s: %w", b.Name, err)
	}
	e.record(b.ID, sandbox.Activity{Tool: "persist_sandbox", Client: owner.Client, Input: fmt.Sprint(persistent)})
	e.publish()
	return info, nil
}
