//go:build cgo

package host

import (
	"context"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/ui"
)

// uiImages adapts the engine's default image and its build to the app's
// first-run screen.
type uiImages struct{ eng *engine.Engine }

func (i uiImages) DefaultImage(ctx context.Context) (ui.ImageState, error) {
	st, build, err := i.eng.DefaultImageState(ctx)
	out := ui.ImageState{Ref: st.Ref, Present: st.Present, Buildable: st.Builtin}
	if build != nil {
		out.Step, out.Done, out.Total, out.Bytes = build.Step, build.Done, build.Total, build.Bytes
	}
	return out, err
}

func (i uiImages) BuildDefaultImage(ctx context.Context, progress func(ui.ImageState)) error {
	return i.eng.BuildDefaultImage(ctx, func(p engine.ImageBuildProgress) {
		progress(ui.ImageState{Step: p.Step, Done: p.Done, Total: p.Total, Bytes: p.Bytes})
	})
}
