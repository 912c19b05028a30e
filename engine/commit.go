package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Commit saves a sandbox's filesystem as the image req.Image ("repo:tag";
// "latest" when no tag is given). It refuses a tag that exists unless
// req.Overwrite, and never writes to the sandbox's own base image, even with
// Overwrite. The image is labelled with its source sandbox and the time,
// keeps its base image's command and user, and carries no label that would
// make its containers look managed by Sandtray. Docker pauses the sandbox
// while it copies the filesystem; progress hears before and after.
func (e *Engine) Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	tag, err := docker.NormalizeTag(strings.TrimSpace(req.Image))
	if err != nil {
		return sandbox.CommitResult{}, fmt.Errorf("image %q is not a valid image name: use repo:tag with lowercase letters, digits, '.', '_', '-' and '/', e.g. \"my-env:v1\": %w", req.Image, sandbox.ErrInvalid)
	}
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	defer e.release(b)
	ctr, err := e.docker.Inspect(ctx, b.id)
	if err != nil {
		return sandbox.CommitResult{}, e.gone(b, fmt.Errorf("commit sandbox %s: %w", b.name, err))
	}
	if err := e.checkCommitTarget(ctx, b, ctr.ImageID, tag, req.Overwrite); err != nil {
		return sandbox.CommitResult{}, err
	}
	cfg, err := e.commitConfig(ctx, b, ctr.ImageID)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	report(progress, 0, 1, fmt.Sprintf("committing sandbox %s to %s (it pauses while Docker copies its files)", b.name, tag))
	id, err := e.docker.Commit(ctx, b.id, tag, cfg)
	e.record(b.id, activityFor("commit_sandbox", owner, tag, err, id))
	if err != nil {
		return sandbox.CommitResult{}, e.gone(b, fmt.Errorf("commit sandbox %s to %s: %w", b.name, tag, err))
	}
	report(progress, 1, 1, fmt.Sprintf("committed sandbox %s to %s (%s)", b.name, tag, short(strings.TrimPrefix(id, "sha256:"))))
	return sandbox.CommitResult{Image: tag, ImageID: id}, nil
}

// checkCommitTarget refuses the sandbox's base image (by name, or a tag that
// points at it) and, without overwrite, any tag that exists.
func (e *Engine) checkCommitTarget(ctx context.Context, b *box, baseID, tag string, overwrite bool) error {
	if base, err := docker.NormalizeTag(b.spec.Image); err == nil && base == tag {
		return fmt.Errorf("%s is the base image of sandbox %s, and Sandtray never overwrites a sandbox's base image; pick another name, e.g. %q: %w",
			tag, b.name, suggestTag(tag, b.name), sandbox.ErrForbidden)
	}
	existing, err := e.docker.InspectImage(ctx, tag)
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("look for image %s: %w", tag, err)
	case existing.ID == baseID:
		return fmt.Errorf("%s names the base image of sandbox %s, and Sandtray never overwrites a sandbox's base image; pick another name: %w", tag, b.name, sandbox.ErrForbidden)
	case !overwrite:
		return fmt.Errorf("image %s already exists; pick another tag, or pass overwrite to move the tag to this sandbox: %w", tag, sandbox.ErrConflict)
	}
	return nil
}

// commitConfig is the base image's configuration with the sandbox's env,
// workdir and Sandtray's commit labels. The base image's own io.sandtray.*
// labels (from an earlier commit) are dropped.
func (e *Engine) commitConfig(ctx context.Context, b *box, baseID string) (docker.ImageConfig, error) {
	base, err := e.docker.InspectImage(ctx, baseID)
	if err != nil && !errors.Is(err, sandbox.ErrNotFound) {
		return docker.ImageConfig{}, fmt.Errorf("inspect the base image of sandbox %s: %w", b.name, err)
	}
	labels := map[string]string{}
	for k, v := range base.Labels {
		if !strings.HasPrefix(k, "io.sandtray.") {
			labels[k] = v
		}
	}
	labels[sandbox.LabelCommittedFrom] = b.name
	labels[sandbox.LabelCommittedAt] = time.Now().UTC().Format(time.RFC3339)
	env := map[string]string{}
	for _, kv := range base.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	maps.Copy(env, b.spec.Env)
	return docker.ImageConfig{
		Labels: labels, Env: envList(env), Cmd: base.Cmd, Entrypoint: base.Entrypoint,
		User: base.User, Workdir: b.spec.Workdir,
	}, nil
}

// suggestTag proposes a tag in the same repository named after the sandbox.
func suggestTag(tag, name string) string {
	repo := tag[:strings.LastIndex(tag, ":")]
	return repo + ":" + strings.ToLower(name)
}

func report(progress sandbox.Progress, current, total float64, msg string) {
	if progress != nil {
		progress(current, total, msg)
	}
}
