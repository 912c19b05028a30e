package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/imagebuild"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/packaging/images"
)

// The sandbox image's builder (engine/internal/imagebuild), under the names
// the app uses: `sandtray image build|status`, the first-run screen, and an
// engine whose default image is missing.
type (
	ImageBuildOptions  = imagebuild.Options
	ImageBuildProgress = imagebuild.Progress
	ImageBuildResult   = imagebuild.Result
	ImageSource        = imagebuild.Source
)

// BuiltinImage is the image Sandtray knows how to build: the default
// config's default_image.
const BuiltinImage = imagebuild.DefaultTag

// ImageState is what Docker has of an image.
type ImageState struct {
	Ref     string
	Present bool
	ID      string
	Created time.Time
	Size    int64
	Comment string // how it was made: the mirror build says so here
	Builtin bool   // Ref is BuiltinImage: `sandtray image build` makes it
}

// BuildImage builds the sandbox image on the Docker that cfg leads to (see
// imagebuild.Build); the caller's options say which tag and source.
func BuildImage(ctx context.Context, cfg config.Config, o ImageBuildOptions) (ImageBuildResult, error) {
	cli, err := runtime.Connect(ctx, "", cfg.Docker.Host)
	if err != nil {
		return ImageBuildResult{}, err
	}
	defer cli.Close()
	cli.SetPullLimit(cfg.Pull.MaxMB << 20)
	return imagebuild.Build(ctx, cli, o)
}

// InspectImageState reports what the Docker that cfg leads to has of ref
// ("" for cfg's default image).
func InspectImageState(ctx context.Context, cfg config.Config, ref string) (ImageState, error) {
	if ref == "" {
		ref = cfg.DefaultImage
	}
	cli, err := runtime.Connect(ctx, "", cfg.Docker.Host)
	if err != nil {
		return ImageState{Ref: ref, Builtin: ref == BuiltinImage}, err
	}
	defer cli.Close()
	return imageState(ctx, cli, ref)
}

func imageState(ctx context.Context, d interface {
	ImageDetails(ctx context.Context, ref string) (runtime.ImageDetails, error)
}, ref string) (ImageState, error) {
	st := ImageState{Ref: ref, Builtin: ref == BuiltinImage}
	det, err := d.ImageDetails(ctx, ref)
	if errors.Is(err, sandbox.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.Present, st.ID, st.Created, st.Size, st.Comment = true, det.ID, det.Created, det.Size, det.Comment
	return st, nil
}

// ImageStateOf reports what Docker has of ref ("" is the default image).
func (e *Engine) ImageStateOf(ctx context.Context, ref string) (ImageState, error) {
	if ref == "" {
		ref = e.cfg().DefaultImage
	}
	return imageState(ctx, e.docker, ref)
}

// imageBuilds is the engine's one build of its default image at a time:
// every caller that needs it (a create, the app's first-run screen) joins
// the build under way, which runs for the engine's lifetime, not the
// first caller's, so a client that gives up does not waste it.
type imageBuilds struct {
	mu   sync.Mutex
	cur  *imageBuild // nil when none runs
	last error       // how the last one ended
}

type imageBuild struct {
	done chan struct{}
	err  error                             // set before done closes
	at   ImageBuildProgress                // guarded by imageBuilds.mu
	subs map[*int]func(ImageBuildProgress) // guarded by imageBuilds.mu
}

func (e *Engine) imageBuilds() *imageBuilds { return &e.images }

// DefaultImageState reports the default image and, while one runs, the
// build that makes it.
func (e *Engine) DefaultImageState(ctx context.Context) (ImageState, *ImageBuildProgress, error) {
	st, err := imageState(ctx, e.docker, e.cfg().DefaultImage)
	bs := e.imageBuilds()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.cur != nil {
		at := bs.cur.at
		return st, &at, err
	}
	return st, nil, err
}

// BuildDefaultImage builds the default image when Docker lacks it, or
// joins the build under way, and waits for it or ctx; progress (if not
// nil) hears each step until then. An image that is there is never built
// again. Only BuiltinImage can be built; a build of it that no registry
// allows goes to Debian's mirror.
func (e *Engine) BuildDefaultImage(ctx context.Context, progress func(ImageBuildProgress)) error {
	ref := e.cfg().DefaultImage
	if ref != BuiltinImage {
		return fmt.Errorf("the default image is %s, which Sandtray cannot build (it builds %s): pull or build it yourself, or set default_image back: %w", ref, BuiltinImage, sandbox.ErrInvalid)
	}
	if has, err := e.docker.ImageExists(ctx, ref); err != nil || has {
		return err
	}
	b, err := e.startBuild(e.execs.Runtime)
	if err != nil {
		return err
	}
	bs := e.imageBuilds()
	key := new(int)
	if progress != nil {
		bs.mu.Lock()
		b.subs[key] = progress
		at := b.at
		bs.mu.Unlock()
		if at.Step != "" {
			progress(at)
		}
		defer func() {
			bs.mu.Lock()
			delete(b.subs, key)
			bs.mu.Unlock()
		}()
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		bs.mu.Lock()
		step := b.at.Step
		bs.mu.Unlock()
		return fmt.Errorf("the sandbox image %s is still being built (now: %s); it takes a few minutes the first time: try again shortly: %w", ref, step, sandbox.ErrUnavailable)
	}
}

// startBuild starts the build, or returns the one under way. It runs under
// the engine's lifetime: Close cancels it and waits for it.
func (e *Engine) startBuild(d imagebuild.Docker) (*imageBuild, error) {
	bs := e.imageBuilds()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.cur != nil {
		return bs.cur, nil
	}
	if err := e.enter(); err != nil {
		return nil, err
	}
	b := &imageBuild{done: make(chan struct{}), subs: map[*int]func(ImageBuildProgress){}}
	bs.cur = b
	o := ImageBuildOptions{Tag: BuiltinImage, Labels: e.cfg().labels, Source: e.buildSource()}
	o.Progress = func(p ImageBuildProgress) {
		bs.mu.Lock()
		b.at = p
		subs := make([]func(ImageBuildProgress), 0, len(b.subs))
		for _, f := range b.subs {
			subs = append(subs, f)
		}
		bs.mu.Unlock()
		for _, f := range subs {
			f(p)
		}
	}
	go func() {
		defer e.wg.Done()
		e.log.Info("building the sandbox image", "image", BuiltinImage, "source", o.Source)
		res, err := imagebuild.Build(e.base, d, o)
		if err != nil {
			e.log.Warn("build the sandbox image", "image", BuiltinImage, "err", err)
			err = fmt.Errorf("could not build the sandbox image %s: %v; run `sandtray image build` to see why: %w", BuiltinImage, err, sandbox.ErrUnavailable)
		} else {
			e.log.Info("built the sandbox image", "image", BuiltinImage, "source", res.Source, "packages", res.Packages, "took", res.Took.Round(time.Second), "registry_failed", res.Fallback)
		}
		bs.mu.Lock()
		b.err, bs.cur, bs.last = err, nil, err
		bs.mu.Unlock()
		close(b.done)
		e.publish()
	}()
	return b, nil
}

// buildSource picks where an automatic build may fetch from: the registry
// only when the config lets Docker pull the Dockerfile's base from it, else
// Debian's mirror alone.
func (e *Engine) buildSource() ImageSource {
	if e.cfg().CheckPull(images.Base()) != nil {
		return imagebuild.SourceMirror
	}
	return imagebuild.SourceAuto
}

// autoBuild says whether a create may build the missing image ref: only
// Sandtray's own image, and not while the config forbids fetching images
// (pull.policy = "never", or sandbox.allow_network = false).
func (e *Engine) autoBuild(ref string) error {
	if ref != BuiltinImage {
		return errNotBuiltin
	}
	if e.cfg().Pull.Policy == config.PullNever || !e.cfg().Sandbox.AllowNetwork {
		return fmt.Errorf("image %s is not on this machine, and the user's config forbids fetching images (pull.policy or sandbox.allow_network); ask the user to run `sandtray image build`: %w", ref, sandbox.ErrForbidden)
	}
	return nil
}

var errNotBuiltin = errors.New("not the built-in image")

// ensureBuiltin builds the missing built-in image for a create, reporting
// progress to its caller.
func (e *Engine) ensureBuiltin(ctx context.Context, progress sandbox.Progress) error {
	return e.BuildDefaultImage(ctx, func(p ImageBuildProgress) {
		if progress != nil {
			msg := "Building the sandbox image (first use): " + p.Step
			progress(float64(p.Done), float64(p.Total), msg)
		}
	})
}
