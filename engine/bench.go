package engine

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/registry"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Bench is the engine's baselines for `sandtray bench`: Docker alone, with
// none of the engine's work, on the engine's own client and settings. Get
// it from Engine.Bench; it is not part of the product's API.
type Bench struct {
	docker runtime.Full
	cfg    *settings
	reg    *registry.Registry
}

// Bench returns the engine's baselines.
func (e *Engine) Bench() Bench { return Bench{docker: e.docker, cfg: e.cfg(), reg: e.reg} }

// BareCreateStart times what Docker alone takes to create and start a
// container of image with the hardening and limits of a default sandbox (no
// kernel, no state, no activity), then removes it, untimed: the baseline
// `sandtray bench` holds the cold path against, in the same run.
func (bn Bench) BareCreateStart(ctx context.Context, image string) (time.Duration, error) {
	spec, err := bn.cfg.specFor(sandbox.CreateRequest{Image: image})
	if err != nil {
		return 0, err
	}
	labels, err := bn.cfg.sandboxLabels(spec, time.Now().UTC())
	if err != nil {
		return 0, err
	}
	labels[sandbox.LabelManaged] = "false" // never adopted, even if left behind by a crash
	start := time.Now()
	id, err := bn.docker.Create(ctx, bn.cfg.createOptions("sandtray_bare-"+spec.Name, spec.Name, spec, labels))
	if err != nil {
		return 0, fmt.Errorf("bare create: %w", err)
	}
	err = bn.docker.Start(ctx, id)
	took := time.Since(start)
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if rmErr := bn.docker.Remove(rmCtx, id); err == nil {
		err = rmErr
	}
	return took, err
}

// TagImage gives the local image src the reference ref as well (`sandtray
// bench` makes an image of its own this way, to measure an image the pool
// was not configured with).
func (bn Bench) TagImage(ctx context.Context, src, ref string) error {
	return bn.docker.TagImage(ctx, src, ref)
}

// Untag removes the reference ref; the image stays while other references
// or containers use it.
func (bn Bench) Untag(ctx context.Context, ref string) error {
	return bn.docker.RemoveImage(ctx, ref)
}

// DirectExec runs cmd in the sandbox ref with one plain `docker exec` and
// returns its stdout and exit code: what other sandbox tools do for every
// call. It is the baseline `sandtray bench` measures the engine against, so
// it skips everything the engine adds (kernels, the process-group wrapper,
// timeouts, output caps, the activity log); callers bound it with ctx.
func (bn Bench) DirectExec(ctx context.Context, ref string, cmd []string) (string, int, error) {
	var sb *box
	if err := bn.reg.WithRef(ref, func(b *box) error { sb = b; return nil }); err != nil { // not acquire: its state save would slow the baseline down
		return "", 0, err
	}
	var out, errOut bytes.Buffer
	code, err := bn.docker.Exec(ctx, sb.ID, runtime.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &errOut})
	if err != nil {
		return "", 0, fmt.Errorf("exec in sandbox %s: %w", sb.Name, err)
	}
	return out.String(), code, nil
}
