package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// InspectImage reports a local image by reference or id. An image that is
// not present locally fails with sandbox.ErrNotFound.
func (c *Client) InspectImage(ctx context.Context, ref string) (runtime.Image, error) {
	res, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return runtime.Image{}, wrap("inspect image "+ref, err)
	}
	img := runtime.Image{ID: res.ID, RepoTags: res.RepoTags, RepoDigests: res.RepoDigests}
	if cfg := res.Config; cfg != nil {
		img.Labels, img.Env, img.Cmd, img.Entrypoint = cfg.Labels, cfg.Env, cfg.Cmd, cfg.Entrypoint
		img.User, img.Workdir = cfg.User, cfg.WorkingDir
	}
	return img, nil
}

// ListImages returns the ids of the local images tagged in repository repo
// (any tag), so tests can remove what they built.
func (c *Client) ListImages(ctx context.Context, repo string) ([]string, error) {
	res, err := c.api.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("reference", repo)})
	if err != nil {
		return nil, wrap("list images of "+repo, err)
	}
	ids := make([]string, 0, len(res.Items))
	for _, s := range res.Items {
		ids = append(ids, s.ID)
	}
	return ids, nil
}

// RemoveImage removes an image by reference or id, with every tag it has
// (force) and its untagged parents. An image that does not exist counts as
// removed; one that a container still uses fails with sandbox.ErrConflict.
func (c *Client) RemoveImage(ctx context.Context, ref string) error {
	_, err := c.api.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	err = wrap("remove image "+ref, err)
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	return err
}

// RemoveUntagged removes image id if nothing names it any more (no tag, no
// digest: a commit moved its tag away), and Docker agrees without force:
// it refuses an image a container uses, running or stopped, or that
// another image is built on, and removed is then false with no error. The
// image's untagged parents go with it.
func (c *Client) RemoveUntagged(ctx context.Context, id string) (removed bool, err error) {
	img, err := c.InspectImage(ctx, id)
	if errors.Is(err, sandbox.ErrNotFound) {
		return false, nil
	}
	if err != nil || len(img.RepoTags) > 0 || len(img.RepoDigests) > 0 {
		return false, err
	}
	_, err = c.api.ImageRemove(ctx, img.ID, client.ImageRemoveOptions{PruneChildren: true})
	err = wrap("remove image "+img.ID, err)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, sandbox.ErrNotFound), errors.Is(err, sandbox.ErrConflict):
		return false, nil
	}
	return false, err
}

// Commit saves a container's filesystem as the image tag (see imageref.Tag)
// and returns the new image's id. Docker pauses the container while it copies
// the filesystem, and moves an existing tag to the new image.
//
// Docker merges the container's labels into the committed image under the
// ones given (a Config does not replace them, measured on 20.10), so Commit
// sets every container label that cfg.Labels lacks to "": an image committed
// from a managed container then carries io.sandtray.managed="" and does not
// make its containers match the "io.sandtray.managed=true" filter.
func (c *Client) Commit(ctx context.Context, id, tag string, cfg runtime.ImageConfig) (string, error) {
	op := fmt.Sprintf("commit container %s to %s", id, tag)
	ctr, err := c.Inspect(ctx, id)
	if err != nil {
		return "", err
	}
	labels := make(map[string]string, len(cfg.Labels)+len(ctr.Labels))
	for k := range ctr.Labels {
		labels[k] = ""
	}
	maps.Copy(labels, cfg.Labels)
	// NoPause: Docker's pause freezes the container's cgroup, and an exec
	// whose runc is still joining it then wedges the container in the daemon
	// (rm -f and inspect hang until the cgroup is thawed by hand). A commit
	// racing a call may capture a file mid-write instead; that is the lesser.
	opts := client.ContainerCommitOptions{
		NoPause:   true,
		Reference: tag,
		Config: &container.Config{
			Labels: labels, Env: cfg.Env, Cmd: cfg.Cmd, Entrypoint: cfg.Entrypoint,
			User: cfg.User, WorkingDir: cfg.Workdir,
		},
	}
	if c.isPodman(ctx) {
		// Podman's Docker-compatible commit (4.x) ignores the config and
		// keeps the container's: it takes Dockerfile-like changes instead.
		cfg.Labels = labels
		opts.Config, opts.Changes = &container.Config{}, podmanChanges(cfg) // a body it decodes
	}
	res, err := c.api.ContainerCommit(ctx, id, opts)
	if err != nil {
		return "", wrap(op, err)
	}
	if res.ID != "" && !strings.Contains(res.ID, ":") {
		// Podman answers with the bare digest; its image inspect, as
		// Docker's, names the algorithm.
		return "sha256:" + res.ID, nil
	}
	return res.ID, nil
}

// podmanChanges is cfg as the changes Podman's commit applies, one
// instruction each: a label or variable per change, its value in quotes
// that Podman strips (it reads no escapes, so a value keeps its own quotes).
// Podman splits a change at its first "=" alone, so a value (an env var a
// model chose) cannot add a label or a variable of its own. Podman ends a
// change at a line break: a value's line breaks become spaces.
func podmanChanges(cfg runtime.ImageConfig) []string {
	oneLine := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
	var out []string
	for _, k := range slices.Sorted(maps.Keys(cfg.Labels)) {
		out = append(out, fmt.Sprintf(`LABEL %s="%s"`, oneLine.Replace(k), oneLine.Replace(cfg.Labels[k])))
	}
	for _, kv := range cfg.Env {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, fmt.Sprintf(`ENV %s="%s"`, oneLine.Replace(k), oneLine.Replace(v)))
	}
	for _, list := range []struct {
		instr string
		args  []string
	}{{"ENTRYPOINT", cfg.Entrypoint}, {"CMD", cfg.Cmd}} {
		if list.args != nil {
			b, _ := json.Marshal(list.args) // JSON escapes line breaks
			out = append(out, list.instr+" "+string(b))
		}
	}
	if cfg.User != "" {
		out = append(out, "USER "+oneLine.Replace(cfg.User))
	}
	if cfg.Workdir != "" {
		out = append(out, "WORKDIR "+oneLine.Replace(cfg.Workdir))
	}
	return out
}

// BuildImage builds the tar build context (a Dockerfile at its top) with
// Docker's classic builder and tags the result tag. It never pulls: the base
// image must be local. Intermediate containers are removed even when a step
// fails, and so are the images of the steps before a failing one (they
// would stay as dangling <none> images); build output lines go to out (nil
// discards). It returns the image id. A failing step is sandbox.ErrInvalid
// with the builder's message.
func (c *Client) BuildImage(ctx context.Context, buildContext io.Reader, tag string, out io.Writer) (id string, err error) {
	steps := &stepImages{w: out}
	defer func() {
		if err != nil && steps.last != "" {
			rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_, _ = c.RemoveUntagged(rmCtx, steps.last) // its untagged parents go with it
		}
	}()
	return c.build(ctx, buildContext, tag, steps)
}

// stepImages passes build output on and keeps the image the last step
// made (the builder's " ---> id" lines, the first of which is the base).
type stepImages struct {
	w          io.Writer
	seen, last string
}

var stepImage = regexp.MustCompile(`(?m)^ ---> ([0-9a-f]{12,64})$`)

func (s *stepImages) Write(p []byte) (int, error) {
	for _, m := range stepImage.FindAllSubmatch(p, -1) {
		if s.seen != "" {
			s.last = string(m[1])
		}
		s.seen = string(m[1])
	}
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

func (c *Client) build(ctx context.Context, buildContext io.Reader, tag string, out io.Writer) (string, error) {
	op := "build image " + tag
	res, err := c.api.ImageBuild(ctx, buildContext, client.ImageBuildOptions{
		Tags: []string{tag}, Remove: true, ForceRemove: true, NoCache: true, PullParent: false,
	})
	if err != nil {
		return "", wrap(op, err)
	}
	defer res.Body.Close()
	id := ""
	if err := readMessages(op, res.Body, func(msg jsonstream.Message) {
		io.WriteString(out, msg.Stream)
		if msg.Aux != nil {
			var aux struct{ ID string }
			if json.Unmarshal(*msg.Aux, &aux) == nil && aux.ID != "" {
				id = aux.ID
			}
		}
	}); err != nil {
		return "", err
	}
	if id == "" {
		return c.ImageID(ctx, tag)
	}
	return id, nil
}

// readMessages reads a reply of the daemon's that is a stream of JSON
// messages (a build's, an import's), passing each to each; the first that
// carries an error ends it with the daemon's complaint.
func readMessages(op string, r io.Reader, each func(jsonstream.Message)) error {
	dec := json.NewDecoder(r)
	for {
		var msg jsonstream.Message
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return wrap(op, err)
		}
		if msg.Error != nil {
			return fmt.Errorf("%s: %w (%s)", op, sandbox.ErrInvalid, strings.TrimSpace(msg.Error.Message))
		}
		each(msg)
	}
}
