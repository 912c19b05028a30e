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
	cli, err := runtime.Connect(ctx, cfg.RuntimeName(), cfg.RuntimeHost())
	if err != nil {
		return ImageBuildResult{}, err
	}
	defer cli.Close()
	if err := runtime.CapabilitiesOf(cli).Missing(runtime.CapBuild); err != nil {
		return ImageBuildResult{}, err
	}
	full := runtime.Complete(cli)
	full.SetPullLimit(cfg.Pull.MaxMB << 20)
	return imagebuild.Build(ctx, full, o)
}

// InspectImageState reports what the Docker that cfg leads to has of ref
// ("" for cfg's default image).
func InspectImageState(ctx context.Context, cfg config.Config, ref string) (ImageState, error) {
	if ref == "" {
		ref = cfg.DefaultImage
	}
	cli, err := runtime.Connect(ctx, cfg.RuntimeName(), cfg.RuntimeHost())
	if err != nil {
		return ImageState{Ref: ref, Builtin: ref == BuiltinImage}, err
	}
	defer cli.Close()
	if err := runtime.CapabilitiesOf(cli).Missing(runtime.CapImages); err != nil {
		return ImageState{Ref: ref, Builtin: ref == BuiltinImage}, err
	}
	return imageState(ctx, runtime.Complete(cli), ref)
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
	done    chan struct{}
	err     error                             // set before done closes
	at      ImageBuildProgress                // guarded by imageBuilds.mu
	subs    map[*int]func(ImageBuildProgress) // guarded by imageBuilds.mu
	started time.Time
	frac    float64 // how far the build is, 0 to 1, as far as it has said (image_estimate.go); guarded by imageBuilds.mu
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
	if err := e.caps.Missing(runtime.CapBuild); err != nil {
		return err
	}
	b, err := e.startBuild(e.execs.Full)
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
	b := &imageBuild{done: make(chan struct{}), subs: map[*int]func(ImageBuildProgress){}, started: time.Now()}
	bs.cur = b
	o := ImageBuildOptions{Tag: BuiltinImage, Labels: e.cfg().labels, Source: e.buildSource()}
	o.Progress = func(p ImageBuildProgress) {
		bs.mu.Lock()
		b.at = p
		b.frac = max(b.frac, fraction(p))
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
// Sandtray's own image, and not while pull.policy = "never" forbids
// fetching images. Building Sandtray's own image is its installation, not
// a sandbox's network: sandbox.allow_network, which keeps sandboxes off
// the network, does not forbid it.
func (e *Engine) autoBuild(ref string) error {
	if ref != BuiltinImage {
		return errNotBuiltin
	}
	if e.cfg().Pull.Policy == config.PullNever {
		return fmt.Errorf("image %s is not on this machine, and the user's config forbids fetching images (pull.policy = \"never\"); ask the user to run `sandtray image build`: %w", ref, sandbox.ErrForbidden)
	}
	return nil
}

var errNotBuiltin = errors.New("not the built-in image")

// buildWaitInCall is how long a create that needs the image waits for its
// build before it answers that the image is being prepared: a model's call
// must not hang for the minutes a first build takes (clients time calls
// out), and calls again.
var buildWaitInCall = 10 * time.Second

// ensureBuiltin builds the missing built-in image for a create (or joins
// the build under way), reporting progress to its caller, and waits for
// it up to buildWaitInCall: a build still running then is an ErrConflict
// (a state the call clashes with until it ends: a tool error the model
// acts on) that says how far it is and to call again.
func (e *Engine) ensureBuiltin(ctx context.Context, progress sandbox.Progress) error {
	wait, cancel := context.WithTimeout(ctx, buildWaitInCall)
	defer cancel()
	err := e.BuildDefaultImage(wait, func(p ImageBuildProgress) {
		if progress != nil {
			msg := "Preparing the sandbox image (first use): " + p.Step
			progress(float64(p.Done), float64(p.Total), msg)
		}
	})
	if err == nil || ctx.Err() != nil || wait.Err() == nil {
		return err
	}
	return e.preparing()
}

// preparing is the answer to a call that needs the image while its build
// runs: what it is doing, about how long it takes yet, and to call again.
func (e *Engine) preparing() error {
	bs := e.imageBuilds()
	bs.mu.Lock()
	b := bs.cur
	var at ImageBuildProgress
	var left time.Duration
	if b != nil {
		at, left = b.at, estimateLeft(b.frac, time.Since(b.started))
	}
	bs.mu.Unlock()
	if b == nil { // it ended meanwhile: the next call finds the image, or the build's error
		return fmt.Errorf("the sandbox image %s was just prepared; call again: %w", BuiltinImage, sandbox.ErrConflict)
	}
	return fmt.Errorf("preparing the sandbox image %s, which Sandtray builds once on first use (now: %s); about %s left. Nothing needs doing: call again in a minute or two, and the call runs once it is ready: %w",
		BuiltinImage, ImageStepText(at), minutesText(left), sandbox.ErrConflict)
}
