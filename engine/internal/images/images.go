// Package images is the engine's images: what the runtime has of one, the
// engine's one build of its default image at a time (engine/internal/imagebuild
// builds it), and what a create that misses its image does (Sandtray's own
// image built, any other pulled within the pull policy).
//
// It never sees the engine: it reaches the engine's configuration and
// lifetime through Host, which the engine implements.
package images

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/imagebuild"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	dockerfile "github.com/sandtray/sandtray/packaging/images"
)

// Builtin is the image Sandtray knows how to build: the default config's
// default_image.
const Builtin = imagebuild.DefaultTag

// State is what Docker has of an image.
type State struct {
	Ref     string
	Present bool
	ID      string
	Created time.Time
	Size    int64
	Comment string // how it was made: the mirror build says so here
	Builtin bool   // Ref is Builtin: `sandtray image build` makes it
}

// Build builds the sandbox image on the Docker that cfg leads to (see
// imagebuild.Build); the caller's options say which tag and source.
func Build(ctx context.Context, cfg config.Config, o imagebuild.Options) (imagebuild.Result, error) {
	cli, err := runtime.Connect(ctx, cfg.RuntimeName(), cfg.RuntimeHost())
	if err != nil {
		return imagebuild.Result{}, err
	}
	defer cli.Close()
	if err := runtime.CapabilitiesOf(cli).Missing(runtime.CapBuild); err != nil {
		return imagebuild.Result{}, err
	}
	full := runtime.Complete(cli)
	full.SetPullLimit(cfg.Pull.MaxMB << 20)
	return imagebuild.Build(ctx, full, o)
}

// Inspect reports what the Docker that cfg leads to has of ref ("" for
// cfg's default image).
func Inspect(ctx context.Context, cfg config.Config, ref string) (State, error) {
	if ref == "" {
		ref = cfg.DefaultImage
	}
	cli, err := runtime.Connect(ctx, cfg.RuntimeName(), cfg.RuntimeHost())
	if err != nil {
		return State{Ref: ref, Builtin: ref == Builtin}, err
	}
	defer cli.Close()
	if err := runtime.CapabilitiesOf(cli).Missing(runtime.CapImages); err != nil {
		return State{Ref: ref, Builtin: ref == Builtin}, err
	}
	return stateOf(ctx, runtime.Complete(cli), ref)
}

func stateOf(ctx context.Context, d interface {
	ImageDetails(ctx context.Context, ref string) (runtime.ImageDetails, error)
}, ref string) (State, error) {
	st := State{Ref: ref, Builtin: ref == Builtin}
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

// Host is what the images need of the engine's centre.
type Host interface {
	// Config is the configuration in force (never changed in place).
	Config() *config.Config
	// Enter joins the engine's lifetime (Close waits for it), or fails
	// once the engine closes; Leave ends what Enter began.
	Enter() error
	Leave()
	// Changed says that what the GUI shows changed.
	Changed()
}

// Docker is what the images ask of the runtime's image store.
type Docker interface {
	ImageExists(ctx context.Context, ref string) (bool, error)
	ImageDetails(ctx context.Context, ref string) (runtime.ImageDetails, error)
	PullImage(ctx context.Context, ref string, progress func(runtime.PullProgress)) error
}

// Options are what New needs besides the Host.
type Options struct {
	Docker  Docker
	Builder imagebuild.Docker    // what builds the default image
	Caps    runtime.Capabilities // what the runtime can do of its optional parts
	Labels  map[string]string    // put on the image built (tests tag theirs)
	Base    context.Context      // the engine's lifetime: a build runs under it
	Log     *slog.Logger
}

// Images is the engine's images: what Docker has of one, the build of the
// default image under way, and a create's missing image.
//
// Its build is the engine's one build of its default image at a time:
// every caller that needs it (a create, the app's first-run screen) joins
// the build under way, which runs for the engine's lifetime, not the
// first caller's, so a client that gives up does not waste it.
type Images struct {
	host Host
	o    Options

	mu   sync.Mutex
	cur  *build // nil when none runs
	last error  // how the last one ended
}

type build struct {
	done    chan struct{}
	err     error                              // set before done closes
	at      imagebuild.Progress                // guarded by Images.mu
	subs    map[*int]func(imagebuild.Progress) // guarded by Images.mu
	started time.Time
	frac    float64 // how far the build is, 0 to 1, as far as it has said (estimate.go); guarded by Images.mu
}

// New returns the engine's images.
func New(h Host, o Options) *Images { return &Images{host: h, o: o} }

// ImageStateOf reports what Docker has of ref ("" is the default image).
func (im *Images) ImageStateOf(ctx context.Context, ref string) (State, error) {
	if ref == "" {
		ref = im.host.Config().DefaultImage
	}
	return stateOf(ctx, im.o.Docker, ref)
}

// DefaultImageState reports the default image and, while one runs, the
// build that makes it.
func (im *Images) DefaultImageState(ctx context.Context) (State, *imagebuild.Progress, error) {
	st, err := stateOf(ctx, im.o.Docker, im.host.Config().DefaultImage)
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.cur != nil {
		at := im.cur.at
		return st, &at, err
	}
	return st, nil, err
}

// BuildDefaultImage builds the default image when Docker lacks it, or
// joins the build under way, and waits for it or ctx; progress (if not
// nil) hears each step until then. An image that is there is never built
// again. Only Builtin can be built; a build of it that no registry
// allows goes to Debian's mirror.
func (im *Images) BuildDefaultImage(ctx context.Context, progress func(imagebuild.Progress)) error {
	ref := im.host.Config().DefaultImage
	if ref != Builtin {
		return fmt.Errorf("the default image is %s, which Sandtray cannot build (it builds %s): pull or build it yourself, or set default_image back: %w", ref, Builtin, sandbox.ErrInvalid)
	}
	if has, err := im.o.Docker.ImageExists(ctx, ref); err != nil || has {
		return err
	}
	if err := im.o.Caps.Missing(runtime.CapBuild); err != nil {
		return err
	}
	b, err := im.startBuild()
	if err != nil {
		return err
	}
	key := new(int)
	if progress != nil {
		im.mu.Lock()
		b.subs[key] = progress
		at := b.at
		im.mu.Unlock()
		if at.Step != "" {
			progress(at)
		}
		defer func() {
			im.mu.Lock()
			delete(b.subs, key)
			im.mu.Unlock()
		}()
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		im.mu.Lock()
		step := b.at.Step
		im.mu.Unlock()
		return fmt.Errorf("the sandbox image %s is still being built (now: %s); it takes a few minutes the first time: try again shortly: %w", ref, step, sandbox.ErrUnavailable)
	}
}

// startBuild starts the build, or returns the one under way. It runs under
// the engine's lifetime: Close cancels it and waits for it.
func (im *Images) startBuild() (*build, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.cur != nil {
		return im.cur, nil
	}
	if err := im.host.Enter(); err != nil {
		return nil, err
	}
	b := &build{done: make(chan struct{}), subs: map[*int]func(imagebuild.Progress){}, started: time.Now()}
	im.cur = b
	o := imagebuild.Options{Tag: Builtin, Labels: im.o.Labels, Source: im.buildSource()}
	o.Progress = func(p imagebuild.Progress) {
		im.mu.Lock()
		b.at = p
		b.frac = max(b.frac, fraction(p))
		subs := make([]func(imagebuild.Progress), 0, len(b.subs))
		for _, f := range b.subs {
			subs = append(subs, f)
		}
		im.mu.Unlock()
		for _, f := range subs {
			f(p)
		}
	}
	go func() {
		defer im.host.Leave()
		log := im.o.Log
		log.Info("building the sandbox image", "image", Builtin, "source", o.Source)
		res, err := imagebuild.Build(im.o.Base, im.o.Builder, o)
		if err != nil {
			log.Warn("build the sandbox image", "image", Builtin, "err", err)
			err = fmt.Errorf("could not build the sandbox image %s: %v; run `sandtray image build` to see why: %w", Builtin, err, sandbox.ErrUnavailable)
		} else {
			log.Info("built the sandbox image", "image", Builtin, "source", res.Source, "packages", res.Packages, "took", res.Took.Round(time.Second), "registry_failed", res.Fallback)
		}
		im.mu.Lock()
		b.err, im.cur, im.last = err, nil, err
		im.mu.Unlock()
		close(b.done)
		im.host.Changed()
	}()
	return b, nil
}

// buildSource picks where an automatic build may fetch from: the registry
// only when the config lets Docker pull the Dockerfile's base from it, else
// Debian's mirror alone.
func (im *Images) buildSource() imagebuild.Source {
	if im.host.Config().CheckPull(dockerfile.Base()) != nil {
		return imagebuild.SourceMirror
	}
	return imagebuild.SourceAuto
}

// AutoBuild says whether a create under cfg may build the missing image
// ref: only Sandtray's own image, and not while pull.policy = "never"
// forbids fetching images (ErrNotBuiltin for any other image). Building
// Sandtray's own image is its installation, not a sandbox's network:
// sandbox.allow_network, which keeps sandboxes off the network, does not
// forbid it.
func AutoBuild(cfg *config.Config, ref string) error {
	if ref != Builtin {
		return ErrNotBuiltin
	}
	if cfg.Pull.Policy == config.PullNever {
		return fmt.Errorf("image %s is not on this machine, and the user's config forbids fetching images (pull.policy = \"never\"); ask the user to run `sandtray image build`: %w", ref, sandbox.ErrForbidden)
	}
	return nil
}

// ErrNotBuiltin is AutoBuild's answer for an image Sandtray does not build:
// it is pulled instead.
var ErrNotBuiltin = errors.New("not the built-in image")

// BuildWaitInCall is how long a create that needs the image waits for its
// build before it answers that the image is being prepared: a model's call
// must not hang for the minutes a first build takes (clients time calls
// out), and calls again. Tests shorten it.
var BuildWaitInCall = 10 * time.Second

// EnsureImage makes sure the runtime has image ref for a create that
// missed it: Sandtray's own image is built here (ensureBuiltin), any other
// pulled within the pull policy, with progress reported to the caller.
func (im *Images) EnsureImage(ctx context.Context, ref string, progress sandbox.Progress) error {
	if !im.o.Caps.Images { // no local image store: the runtime fetches the image at create
		return nil
	}
	ok, err := im.o.Docker.ImageExists(ctx, ref)
	if err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	if ok {
		return nil
	}
	cfg := im.host.Config()
	if err := AutoBuild(cfg, ref); !errors.Is(err, ErrNotBuiltin) {
		if err != nil {
			return err
		}
		return im.ensureBuiltin(ctx, progress) // Sandtray's own image: built here, not pulled
	}
	if err := cfg.CheckPull(ref); err != nil {
		return err
	}
	err = im.o.Docker.PullImage(ctx, ref, func(p runtime.PullProgress) {
		if progress != nil {
			progress(float64(p.Current), float64(p.Total), strings.TrimSpace(p.Status+" "+p.ID))
		}
	})
	if err != nil {
		return fmt.Errorf("image %s is not on this machine and could not be pulled (%v); build or pull it first (the default image: `make image`), or pick a local image (`docker images`): %w",
			ref, err, sandbox.ErrNotFound)
	}
	return nil
}

// ensureBuiltin builds the missing built-in image for a create (or joins
// the build under way), reporting progress to its caller, and waits for
// it up to BuildWaitInCall: a build still running then is an ErrConflict
// (a state the call clashes with until it ends: a tool error the model
// acts on) that says how far it is and to call again.
func (im *Images) ensureBuiltin(ctx context.Context, progress sandbox.Progress) error {
	wait, cancel := context.WithTimeout(ctx, BuildWaitInCall)
	defer cancel()
	err := im.BuildDefaultImage(wait, func(p imagebuild.Progress) {
		if progress != nil {
			msg := "Preparing the sandbox image (first use): " + p.Step
			progress(float64(p.Done), float64(p.Total), msg)
		}
	})
	if err == nil || ctx.Err() != nil || wait.Err() == nil {
		return err
	}
	return im.preparing()
}

// preparing is the answer to a call that needs the image while its build
// runs: what it is doing, about how long it takes yet, and to call again.
func (im *Images) preparing() error {
	im.mu.Lock()
	b := im.cur
	var at imagebuild.Progress
	var left time.Duration
	if b != nil {
		at, left = b.at, estimateLeft(b.frac, time.Since(b.started))
	}
	im.mu.Unlock()
	if b == nil { // it ended meanwhile: the next call finds the image, or the build's error
		return fmt.Errorf("the sandbox image %s was just prepared; call again: %w", Builtin, sandbox.ErrConflict)
	}
	return fmt.Errorf("preparing the sandbox image %s, which Sandtray builds once on first use (now: %s); about %s left. Nothing needs doing: call again in a minute or two, and the call runs once it is ready: %w",
		Builtin, StepText(at), minutesText(left), sandbox.ErrConflict)
}
