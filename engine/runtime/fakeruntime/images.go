package fakeruntime

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// image is a local image: its configuration and its files.
type image struct {
	cfg     runtime.Image // ID set; RepoTags kept in step with the daemon's tags
	files   memFS
	created time.Time
	size    int64
}

// imageSpec is an image to add (AddImage) or to pull (AddPullable).
type imageSpec struct {
	cfg   runtime.Image
	files map[string]string
	size  int64
}

// baseFiles are in every fake image: a root user and group, and the
// folders every image has.
var baseFiles = map[string]string{
	"/bin/": "", "/etc/": "", "/root/": "", "/tmp/": "",
	"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	"/etc/group":  "root:x:0:\nnogroup:x:65534:\n",
}

// normalize is ref as Docker names it locally: "debian" is
// "debian:latest", Docker Hub's prefixes dropped. An id is left as it is.
func normalize(ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	ref = strings.TrimPrefix(ref, "docker.io/")
	ref = strings.TrimPrefix(ref, "library/")
	if strings.Contains(ref, "@") {
		return ref
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if !strings.Contains(last, ":") {
		ref += ":latest"
	}
	return ref
}

// AddImage puts an image in the store under ref, with cfg's configuration
// (its ID made up when empty) and files (path → content; a path ending in
// "/" is a folder), besides the base files every fake image has. It
// returns the image's id.
func (r *Runtime) AddImage(ref string, cfg runtime.Image, files map[string]string) string {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	return r.d.addImage(ref, imageSpec{cfg: cfg, files: files, size: 100 << 20})
}

// AddPullable makes ref an image a pull can fetch, with cfg and files as
// AddImage has them.
func (r *Runtime) AddPullable(ref string, cfg runtime.Image, files map[string]string) {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	r.d.pullable[normalize(ref)] = imageSpec{cfg: cfg, files: files, size: 100 << 20}
}

// addImage stores spec under ref. Callers hold d.mu.
func (d *daemon) addImage(ref string, spec imageSpec) string {
	cfg := spec.cfg
	if cfg.ID == "" {
		cfg.ID = "sha256:" + d.newID()
	}
	files := newFS()
	for _, src := range []map[string]string{baseFiles, spec.files} {
		for p, content := range src {
			if strings.HasSuffix(p, "/") {
				_ = files.mkdirAll(p, 0o755, 0, 0, false)
				continue
			}
			_ = files.writeFile(p, []byte(content), 0o644, false)
		}
	}
	if n := files["/tmp"]; n != nil {
		n.mode = fs.ModeDir | fs.ModeSticky | 0o777
	}
	cfg.RepoTags = nil
	d.images[cfg.ID] = &image{cfg: cfg, files: files, created: time.Now(), size: spec.size}
	if ref != "" {
		d.tag(cfg.ID, normalize(ref))
	}
	return cfg.ID
}

// tag points ref at image id, moving it off the image it named. Callers
// hold d.mu.
func (d *daemon) tag(id, ref string) {
	if old, ok := d.tags[ref]; ok && old != id {
		if img := d.images[old]; img != nil {
			img.cfg.RepoTags = slices.DeleteFunc(img.cfg.RepoTags, func(t string) bool { return t == ref })
		}
	}
	d.tags[ref] = id
	img := d.images[id]
	if !slices.Contains(img.cfg.RepoTags, ref) {
		img.cfg.RepoTags = append(img.cfg.RepoTags, ref)
		slices.Sort(img.cfg.RepoTags)
	}
}

// image finds a local image by reference or id (a full id or a prefix of
// at least 12 hex digits). Callers hold d.mu.
func (d *daemon) image(ref string) (*image, bool) {
	if id, ok := d.tags[normalize(ref)]; ok {
		return d.images[id], true
	}
	if img, ok := d.images[ref]; ok {
		return img, true
	}
	if img, ok := d.images["sha256:"+ref]; ok {
		return img, true
	}
	hex := strings.TrimPrefix(ref, "sha256:")
	if len(hex) >= 12 {
		for id, img := range d.images {
			if strings.HasPrefix(strings.TrimPrefix(id, "sha256:"), hex) {
				return img, true
			}
		}
	}
	return nil, false
}

func noImage(op, ref string) error {
	return fmt.Errorf("%s: %w (No such image: %s)", op, sandbox.ErrNotFound, ref)
}

// ImageExists reports whether ref is a local image.
func (r *Runtime) ImageExists(ctx context.Context, ref string) (bool, error) {
	if err := r.lock(ctx, "ImageExists"); err != nil {
		return false, err
	}
	defer r.unlock()
	_, ok := r.d.image(ref)
	return ok, nil
}

// PullImage fetches ref when AddPullable made it pullable; any other
// reference fails with sandbox.ErrNotFound, as Docker's pull of an image
// no registry has does. An empty or malformed reference is
// sandbox.ErrInvalid.
func (r *Runtime) PullImage(ctx context.Context, ref string, progress func(runtime.PullProgress)) error {
	op := "pull image " + ref
	name := ref
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		name = ref[:i]
	}
	if name == "" || strings.ContainsAny(ref, " \t\n") || name != strings.ToLower(name) {
		return fmt.Errorf("%s: %w (invalid reference format)", op, sandbox.ErrInvalid)
	}
	if err := r.lock(ctx, "PullImage"); err != nil {
		return err
	}
	spec, ok := r.d.pullable[normalize(ref)]
	if !ok {
		r.unlock()
		return fmt.Errorf("%s: %w (pull access denied for %s, repository does not exist or may require 'docker login')", op, sandbox.ErrNotFound, ref)
	}
	r.d.addImage(ref, spec)
	r.d.emitImage(normalize(ref), "pull")
	r.unlock()
	if progress != nil {
		progress(runtime.PullProgress{Status: "Pulling fs layer", ID: "fake"})
		progress(runtime.PullProgress{Status: "Downloading", ID: "fake", Current: spec.size, Total: spec.size})
		progress(runtime.PullProgress{Status: "Pull complete", ID: "fake"})
	}
	return nil
}

// InspectImage reports a local image; a missing one is sandbox.ErrNotFound.
func (r *Runtime) InspectImage(ctx context.Context, ref string) (runtime.Image, error) {
	if err := r.lock(ctx, "InspectImage"); err != nil {
		return runtime.Image{}, err
	}
	defer r.unlock()
	img, ok := r.d.image(ref)
	if !ok {
		return runtime.Image{}, noImage("inspect image "+ref, ref)
	}
	out := img.cfg
	out.RepoTags = slices.Clone(out.RepoTags)
	out.Labels = copyMap(out.Labels)
	out.Env = slices.Clone(out.Env)
	return out, nil
}

// ImageDetails reports a local image's id, creation time and size.
func (r *Runtime) ImageDetails(ctx context.Context, ref string) (runtime.ImageDetails, error) {
	if err := r.lock(ctx, "ImageDetails"); err != nil {
		return runtime.ImageDetails{}, err
	}
	defer r.unlock()
	img, ok := r.d.image(ref)
	if !ok {
		return runtime.ImageDetails{}, noImage("inspect image "+ref, ref)
	}
	return runtime.ImageDetails{ID: img.cfg.ID, Created: img.created, Size: img.size}, nil
}

// ImageSize is a local image's size.
func (r *Runtime) ImageSize(ctx context.Context, ref string) (int64, error) {
	d, err := r.ImageDetails(ctx, ref)
	return d.Size, err
}

// ImagesLabeled lists the local images carrying every label of labels.
func (r *Runtime) ImagesLabeled(ctx context.Context, labels map[string]string) ([]runtime.LabeledImage, error) {
	if err := r.lock(ctx, "ImagesLabeled"); err != nil {
		return nil, err
	}
	defer r.unlock()
	var out []runtime.LabeledImage
	for _, id := range sortedKeys(r.d.images) {
		img := r.d.images[id]
		if hasLabels(img.cfg.Labels, labels) {
			out = append(out, runtime.LabeledImage{ID: id, RepoTags: slices.Clone(img.cfg.RepoTags), Labels: copyMap(img.cfg.Labels),
				Created: img.created.UTC(), Size: img.size})
		}
	}
	return out, nil
}

// TagImage gives the local image src the reference ref as well.
func (r *Runtime) TagImage(ctx context.Context, src, ref string) error {
	if err := r.lock(ctx, "TagImage"); err != nil {
		return err
	}
	defer r.unlock()
	img, ok := r.d.image(src)
	if !ok {
		return noImage(fmt.Sprintf("tag image %s as %s", src, ref), src)
	}
	r.d.tag(img.cfg.ID, normalize(ref))
	r.d.emitImage(normalize(ref), "tag")
	return nil
}

// RemoveImage removes a local image (every tag of it, when ref is an id;
// the tag alone when the image has others); a missing one counts as
// removed.
func (r *Runtime) RemoveImage(ctx context.Context, ref string) error {
	if err := r.lock(ctx, "RemoveImage"); err != nil {
		return err
	}
	defer r.unlock()
	img, ok := r.d.image(ref)
	if !ok {
		return nil
	}
	if t := normalize(ref); r.d.tags[t] == img.cfg.ID && len(img.cfg.RepoTags) > 1 {
		delete(r.d.tags, t)
		img.cfg.RepoTags = slices.DeleteFunc(img.cfg.RepoTags, func(s string) bool { return s == t })
		r.d.emitImage(t, "untag")
		return nil
	}
	r.d.dropImage(img)
	return nil
}

// dropImage removes img and its tags. Callers hold d.mu.
func (d *daemon) dropImage(img *image) {
	for _, t := range img.cfg.RepoTags {
		delete(d.tags, t)
		d.emitImage(t, "untag")
	}
	delete(d.images, img.cfg.ID)
	d.emitImage(img.cfg.ID, "delete")
}

// RemoveUntagged removes image id if no tag names it.
func (r *Runtime) RemoveUntagged(ctx context.Context, id string) (bool, error) {
	if err := r.lock(ctx, "RemoveUntagged"); err != nil {
		return false, err
	}
	defer r.unlock()
	img, ok := r.d.image(id)
	if !ok || len(img.cfg.RepoTags) > 0 || len(img.cfg.RepoDigests) > 0 {
		return false, nil
	}
	for _, c := range r.d.containers {
		if c.imageID == img.cfg.ID {
			return false, nil // in use: Docker refuses (a conflict), which counts as not removed
		}
	}
	r.d.dropImage(img)
	return true, nil
}
