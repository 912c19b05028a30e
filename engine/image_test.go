package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/images"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestOnlyTheBuiltinImageIsBuilt: a create that misses Sandtray's own image
// builds it, with the default config too (sandbox.allow_network = false
// keeps sandboxes off the network; building Sandtray's own image is its
// installation), unless pull.policy = "never"; any other missing image is
// pulled as before; and the app cannot build a default image Sandtray
// does not know how to make.
func TestOnlyTheBuiltinImageIsBuilt(t *testing.T) {
	te := newTestEngine(t)
	if err := images.AutoBuild(&te.Engine.cfg().Config, BuiltinImage); err != nil {
		t.Errorf("the built-in image with the default config (allow_network = false): %v; want it built", err)
	}
	te.Engine.cfg().Sandbox.AllowNetwork = true
	if err := images.AutoBuild(&te.Engine.cfg().Config, BuiltinImage); err != nil {
		t.Errorf("the built-in image with allow_network = true: %v; want it built", err)
	}
	if err := images.AutoBuild(&te.Engine.cfg().Config, "python:3.12"); !errors.Is(err, images.ErrNotBuiltin) {
		t.Errorf("another image: %v; want it pulled, not built", err)
	}
	te.Engine.cfg().Pull.Policy = config.PullNever
	if err := images.AutoBuild(&te.Engine.cfg().Config, BuiltinImage); !errors.Is(err, sandbox.ErrForbidden) || !strings.Contains(err.Error(), "sandtray image build") {
		t.Errorf("pull.policy = never: %v; want ErrForbidden naming `sandtray image build`", err)
	}
	te.Engine.cfg().Pull.Policy, te.Engine.cfg().Sandbox.AllowNetwork = "registries", false
	// The test image is there: asking for it builds nothing (were the
	// test image the built-in one, a build would replace it).
	if err := te.BuildDefaultImage(context.Background(), nil); err != nil {
		t.Errorf("building the default image %s that Docker has: %v; want nothing done", te.cfg.DefaultImage, err)
	}
	if _, build, _ := te.DefaultImageState(context.Background()); build != nil {
		t.Errorf("a build started for an image Docker has: %+v", build)
	}
	te.Engine.cfg().DefaultImage = "sandtray-test/not-builtin:latest"
	if err := te.BuildDefaultImage(context.Background(), nil); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("building a default image Sandtray does not make: %v; want ErrInvalid", err)
	}
	te.Engine.cfg().DefaultImage = te.cfg.DefaultImage
	st, build, err := te.DefaultImageState(context.Background())
	if err != nil || !st.Present || st.Ref != te.cfg.DefaultImage || build != nil || st.ID == "" {
		t.Errorf("DefaultImageState = %+v, %v, %v; want the test image, present, no build", st, build, err)
	}
}
