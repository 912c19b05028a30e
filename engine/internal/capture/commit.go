package capture

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/imageref"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Tag maps the image name a caller gave to the reference a commit writes:
// a name under namespace (e.g. "sandtray-local/") is kept, any other goes
// under it ("foo:v1" becomes "sandtray-local/foo:v1"), so a commit never
// takes a name the user's images or Docker's pulls use. A name with a
// registry host is refused, saying which names are allowed.
func Tag(image, namespace string) (string, error) {
	image = strings.TrimSpace(image)
	tag, err := imageref.Tag(image)
	if err != nil {
		return "", fmt.Errorf("image %q is not a valid image name: use repo:tag with lowercase letters, digits, '.', '_', '-' and '/', e.g. \"my-env:v1\" (saved as %smy-env:v1): %w", image, namespace, sandbox.ErrInvalid)
	}
	if strings.HasPrefix(tag, namespace) {
		return tag, nil
	}
	if reg, err := imageref.Registry(image); err != nil || reg != "docker.io" {
		return "", fmt.Errorf("image %q names a registry host (%s); commits are saved only on this machine, under %s: give repo:tag such as \"my-env:v1\", saved as %smy-env:v1: %w",
			image, reg, namespace, namespace, sandbox.ErrForbidden)
	}
	tag, err = imageref.Tag(namespace + tag)
	if err == nil && !strings.HasPrefix(tag, namespace) {
		err = fmt.Errorf("it would be saved as %s", tag)
	}
	if err != nil {
		return "", fmt.Errorf("image %q cannot be saved under %s (%v); give repo:tag such as \"my-env:v1\": %w", image, namespace, err, sandbox.ErrInvalid)
	}
	return tag, nil
}

// Commit saves t's filesystem as the image tag (see Tag). It refuses a tag
// that exists unless overwrite, moves a tag only from an image this
// engine committed, and never writes to the sandbox's own base image or to an
// image the configuration names (default, language and pool images). The image is labelled with its source sandbox
// and the time, keeps its base image's command and user, and carries no
// label that would make its containers look managed by Sandtray. Docker
// pauses the sandbox while it copies the filesystem; progress hears before
// and after. The image an overwrite took the tag from is removed when
// nothing else names or uses it (see dropReplaced). A commit the image
// budget (Config.Images) refuses is taken back: the tag names what it named
// before.
func (c *Capture) Commit(ctx context.Context, t Target, tag string, overwrite bool, progress sandbox.Progress) (sandbox.CommitResult, error) {
	ctr, err := c.docker.Inspect(ctx, t.ID())
	if err != nil {
		return sandbox.CommitResult{}, t.Gone(fmt.Errorf("commit sandbox %s: %w", t.Name(), err))
	}
	replaced, err := c.checkCommitTarget(ctx, t, ctr.ImageID, tag, overwrite)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	if c.cfg.Images != nil {
		if err := c.cfg.Images.Check(ctx); err != nil {
			return sandbox.CommitResult{}, fmt.Errorf("commit sandbox %s to %s refused: %w", t.Name(), tag, err)
		}
	}
	cfg, err := c.commitConfig(ctx, t, ctr.ImageID)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	report(progress, 0, 1, fmt.Sprintf("committing sandbox %s to %s (it pauses while Docker copies its files)", t.Name(), tag))
	id, err := c.docker.Commit(ctx, t.ID(), tag, cfg)
	if err != nil {
		return sandbox.CommitResult{}, t.Gone(fmt.Errorf("commit sandbox %s to %s: %w", t.Name(), tag, err))
	}
	if c.cfg.Images != nil {
		if err := c.cfg.Images.Admit(ctx, id); err != nil {
			c.takeBack(ctx, id, tag, replaced)
			return sandbox.CommitResult{}, fmt.Errorf("commit sandbox %s to %s refused: %w", t.Name(), tag, err)
		}
	}
	msg := fmt.Sprintf("committed sandbox %s to %s (%s)", t.Name(), tag, sandbox.ShortID(strings.TrimPrefix(id, "sha256:")))
	if replaced != "" && replaced != id && c.dropReplaced(ctx, replaced, tag) {
		msg += fmt.Sprintf("; removed the image %s named before (%s), which nothing else named or used", tag, sandbox.ShortID(strings.TrimPrefix(replaced, "sha256:")))
	}
	report(progress, 1, 1, msg)
	return sandbox.CommitResult{Image: tag, ImageID: id}, nil
}

// takeBack undoes a commit the image budget refused: tag goes back to the
// image it named before (replaced, "" for none) and the new image id is
// removed.
func (c *Capture) takeBack(ctx context.Context, id, tag, replaced string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var err error
	if replaced != "" {
		err = c.docker.TagImage(ctx, replaced, tag)
	} else {
		err = c.docker.RemoveImage(ctx, tag)
	}
	if err == nil {
		_, err = c.docker.RemoveUntagged(ctx, id)
	}
	if err != nil {
		c.log.Warn("take back a commit past limits.max_committed_mb", "tag", tag, "image", id, "err", err)
	}
}

// dropReplaced removes the image a commit moved tag away from, so that
// overwriting a tag leaves no dangling image behind. It is Sandtray's own
// (checkCommitTarget moves only tags of this engine's commits, and tag is in
// its namespace); Docker removes it only when no tag, container or child
// image still needs it (docker.Client.RemoveUntagged). A failure is logged:
// the commit itself is done.
func (c *Capture) dropReplaced(ctx context.Context, id, tag string) bool {
	removed, err := c.docker.RemoveUntagged(ctx, id)
	if err != nil {
		c.log.Warn("remove the image a commit replaced", "tag", tag, "image", id, "err", err)
	}
	return removed
}

// checkCommitTarget refuses the sandbox's base image and the configured
// images (by name, or a tag that points at one), any tag of an image this
// engine did not commit (the user's, or another engine's: F64), and,
// without overwrite, any tag that exists. It returns the id of the image
// the tag names now, which the commit takes it from ("" when there is
// none).
func (c *Capture) checkCommitTarget(ctx context.Context, t Target, baseID, tag string, overwrite bool) (string, error) {
	if base, err := imageref.Tag(t.Image); err == nil && base == tag {
		return "", fmt.Errorf("%s is the base image of sandbox %s, and Sandtray never overwrites a sandbox's base image; pick another name, e.g. %q: %w",
			tag, t.Name(), suggestTag(tag, t.Name()), sandbox.ErrForbidden)
	}
	for _, p := range c.cfg.Protected {
		if n, err := imageref.Tag(p); err == nil && n == tag {
			return "", fmt.Errorf("%s is an image Sandtray's configuration starts sandboxes from (default, language or pool image), and Sandtray never overwrites those; pick another name, e.g. %q: %w",
				tag, suggestTag(tag, t.Name()), sandbox.ErrForbidden)
		}
	}
	existing, err := c.docker.InspectImage(ctx, tag)
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("look for image %s: %w", tag, err)
	case existing.ID == baseID:
		return "", fmt.Errorf("%s names the base image of sandbox %s, and Sandtray never overwrites a sandbox's base image; pick another name: %w", tag, t.Name(), sandbox.ErrForbidden)
	case existing.Labels[sandbox.LabelCommittedFrom] == "":
		return "", fmt.Errorf("image %s exists and was not committed by Sandtray, which moves only tags of its own commits; pick another name, e.g. %q: %w",
			tag, suggestTag(tag, t.Name()), sandbox.ErrForbidden)
	case existing.Labels[sandbox.LabelCommittedBy] != c.cfg.Engine:
		return "", fmt.Errorf("image %s was committed by another Sandtray engine (another user's, or one with a state dir of its own), or by a Sandtray too old to say which, "+
			"and an engine never moves or removes another's image; pick another name, e.g. %q: %w", tag, suggestTag(tag, t.Name()), sandbox.ErrForbidden)
	case !overwrite:
		return "", fmt.Errorf("image %s already exists; pick another tag, or pass overwrite to move the tag to this sandbox: %w", tag, sandbox.ErrConflict)
	}
	return existing.ID, nil
}

// commitConfig is the base image's configuration with the sandbox's env,
// workdir and Sandtray's commit labels. The base image's own io.sandtray.*
// labels (from an earlier commit) are dropped.
func (c *Capture) commitConfig(ctx context.Context, t Target, baseID string) (runtime.ImageConfig, error) {
	base, err := c.docker.InspectImage(ctx, baseID)
	if err != nil && !errors.Is(err, sandbox.ErrNotFound) {
		return runtime.ImageConfig{}, fmt.Errorf("inspect the base image of sandbox %s: %w", t.Name(), err)
	}
	labels := map[string]string{}
	for k, v := range base.Labels {
		if !strings.HasPrefix(k, "io.sandtray.") {
			labels[k] = v
		}
	}
	labels[sandbox.LabelCommittedFrom] = t.Name()
	labels[sandbox.LabelCommittedAt] = time.Now().UTC().Format(time.RFC3339)
	labels[sandbox.LabelCommittedBy], labels[sandbox.LabelCommittedOn] = c.cfg.Engine, baseID
	env := map[string]string{}
	for _, kv := range base.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	maps.Copy(env, t.Env)
	return runtime.ImageConfig{
		Labels: labels, Env: sandbox.EnvList(env), Cmd: base.Cmd, Entrypoint: base.Entrypoint,
		User: base.User, Workdir: t.Workdir(),
	}, nil
}

// suggestTag proposes a tag in the same repository named after the sandbox.
func suggestTag(tag, name string) string {
	repo := tag[:strings.LastIndex(tag, ":")]
	return repo + ":" + strings.ToLower(name)
}
