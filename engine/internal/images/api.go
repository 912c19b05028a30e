package images

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/internal/imagebuild"
)

// API is what this part gives the Engine's callers: the images (the default
// image's build and state). Package engine promotes these methods, and only
// these, onto *engine.Engine; the rest of the part's exported methods are
// the engine's centre's to call.
type API interface {
	BuildLeft() time.Duration
	BuildStarted() time.Time
	ImageStateOf(ctx context.Context, ref string) (State, error)
	DefaultImageState(ctx context.Context) (State, *imagebuild.Progress, error)
	BuildDefaultImage(ctx context.Context, progress func(imagebuild.Progress)) error
}
