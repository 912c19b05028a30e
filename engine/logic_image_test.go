package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/imagebuild"
	"github.com/sandtray/sandtray/engine/internal/images"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// buildable is the fake with a Builder, which the build held at its first
// step never reaches: the fake cannot build, and an engine on a runtime
// that cannot refuses to start a build.
type buildable struct{ *fakeruntime.Runtime }

func (buildable) BuildImage(context.Context, io.Reader, string, io.Writer) (string, error) {
	return "", errors.ErrUnsupported
}
func (buildable) ImportImage(context.Context, io.Reader, string, []string, string) (string, error) {
	return "", errors.ErrUnsupported
}
func (buildable) RunBuildStep(context.Context, runtime.BuildStep) (string, int, error) {
	return "", -1, errors.ErrUnsupported
}

// TestLogicFirstCallPreparesTheImage: with the default config
// (sandbox.allow_network = false) and Sandtray's own image absent, an
// assistant's first sandbox starts the image's build instead of telling
// the model to ask the user for a terminal command, and answers at once
// that the image is being prepared, about how long it takes, and to call
// again; a second call joins the same build. pull.policy = "never" still
// forbids it. Before, the call answered "ask the user to run `sandtray
// image build`" and built nothing.
func TestLogicFirstCallPreparesTheImage(t *testing.T) {
	// Debian's mirror that never answers: the build stays at its first step.
	held := make(chan struct{})
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-held:
		case <-r.Context().Done():
		}
	}))
	defer mirror.Close()
	defer close(held)
	t.Setenv(imagebuild.MirrorEnv, mirror.URL)
	old := images.BuildWaitInCall
	images.BuildWaitInCall = 200 * time.Millisecond
	t.Cleanup(func() { images.BuildWaitInCall = old })

	cfg := logicConfig(t)
	cfg.DefaultImage = BuiltinImage
	e, err := New(context.Background(), cfg, Options{Runtime: buildable{newFakeDaemon()}, Tick: logicTick, CgroupRoot: t.TempDir(),
		Labels: map[string]string{sandbox.LabelTest: t.Name()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	le := &logicEngine{Engine: e, owner: sandbox.Owner{Session: "s-build", Client: "logic-test 1.0"}, cfg: cfg}
	le.SessionStarted(le.owner)
	if le.cfg.Sandbox.AllowNetwork {
		t.Fatal("the test wants the default, sandbox.allow_network = false")
	}
	for call := range 2 {
		_, err := le.Create(context.Background(), le.owner, sandbox.CreateRequest{}, nil)
		if !errors.Is(err, sandbox.ErrConflict) || !sandbox.IsUserError(err) {
			t.Fatalf("call %d: %v; want a conflict (a tool error the model acts on) while the image is prepared", call+1, err)
		}
		msg := err.Error()
		for _, want := range []string{"preparing the sandbox image " + BuiltinImage, "about 8 min left", "call again"} {
			if !strings.Contains(msg, want) {
				t.Errorf("call %d says %q; want %q in it", call+1, msg, want)
			}
		}
		if strings.Contains(msg, "sandtray image build") {
			t.Errorf("call %d asks for a terminal step: %q", call+1, msg)
		}
	}
	if got := le.BuildStarted(); got.IsZero() {
		t.Error("no build runs")
	}
	le.Engine.cfg().Pull.Policy = config.PullNever
	if err := images.AutoBuild(&le.Engine.cfg().Config, BuiltinImage); !errors.Is(err, sandbox.ErrForbidden) {
		t.Errorf("pull.policy = never: %v; want the build forbidden", err)
	}
}
