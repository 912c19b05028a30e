package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// BareCreateStart times what Docker alone takes to create and start a
// container of image with the hardening and limits of a default sandbox (no
// kernel, no state, no activity), then removes it, untimed: the baseline
// `sandtray bench` holds the cold path against, in the same run.
func (e *Engine) BareCreateStart(ctx context.Context, image string) (time.Duration, error) {
	spec, err := e.cfg.specFor(sandbox.CreateRequest{Image: image})
	if err != nil {
		return 0, err
	}
	labels, err := e.cfg.sandboxLabels(spec, time.Now().UTC())
	if err != nil {
		return 0, err
	}
	labels[sandbox.LabelManaged] = "false" // never adopted, even if left behind by a crash
	start := time.Now()
	id, err := e.docker.Create(ctx, e.cfg.createOptions("sandtray_bare-"+spec.Name, spec.Name, spec, labels))
	if err != nil {
		return 0, fmt.Errorf("bare create: %w", err)
	}
	err = e.docker.Start(ctx, id)
	took := time.Since(start)
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if rmErr := e.docker.Remove(rmCtx, id); err == nil {
		err = rmErr
	}
	return took, err
}

// TagImage gives the local image src the reference ref as well (`sandtray
// bench` makes an image of its own this way, to measure an image the pool
// was not configured with).
func (e *Engine) TagImage(ctx context.Context, src, ref string) error {
	return e.docker.TagImage(ctx, src, ref)
}

// Untag removes the reference ref; the image stays while other references
// or containers use it.
func (e *Engine) Untag(ctx context.Context, ref string) error {
	return e.docker.RemoveImage(ctx, ref)
}
