package engine

import (
	"context"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/imagebuild"
	"github.com/sandtray/sandtray/engine/internal/images"
)

// The engine's images (engine/internal/images) and the sandbox image's
// builder (engine/internal/imagebuild), under the names the app uses:
// `sandtray image build|status`, the first-run screen, and an engine whose
// default image is missing.
type (
	ImageBuildOptions  = imagebuild.Options
	ImageBuildProgress = imagebuild.Progress
	ImageBuildResult   = imagebuild.Result
	ImageSource        = imagebuild.Source
	// ImageState is what Docker has of an image.
	ImageState = images.State
)

// BuiltinImage is the image Sandtray knows how to build: the default
// config's default_image.
const BuiltinImage = images.Builtin

// BuildImage builds the sandbox image on the Docker that cfg leads to (see
// imagebuild.Build); the caller's options say which tag and source.
func BuildImage(ctx context.Context, cfg config.Config, o ImageBuildOptions) (ImageBuildResult, error) {
	return images.Build(ctx, cfg, o)
}

// InspectImageState reports what the Docker that cfg leads to has of ref
// ("" for cfg's default image).
func InspectImageState(ctx context.Context, cfg config.Config, ref string) (ImageState, error) {
	return images.Inspect(ctx, cfg, ref)
}

// ImageStepText is a build's step with how far it is: "Downloading 171
// packages: 64 of 128 MB".
func ImageStepText(p ImageBuildProgress) string { return images.StepText(p) }

// imagesPart is the engine's images, embedded in Engine: ImageStateOf,
// DefaultImageState, BuildDefaultImage, BuildLeft and BuildStarted for the
// app, EnsureImage for a create that misses its image.
type imagesPart = images.Images

// imageHost is the engine as its images see it (images.Host).
type imageHost struct{ e *Engine }

func (h imageHost) Config() *config.Config { return &h.e.cfg().Config }
func (h imageHost) Enter() error           { return h.e.reg.Enter() }
func (h imageHost) Leave()                 { h.e.reg.Leave() }
func (h imageHost) Changed()               { h.e.publish() }
