package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestTheSeamIsSmall: the core every runtime must provide stays at most 25
// methods, and none of the optional parts' methods creeps back into it.
func TestTheSeamIsSmall(t *testing.T) {
	core := reflect.TypeFor[runtime.Runtime]()
	if n := core.NumMethod(); n > 25 {
		t.Errorf("runtime.Runtime has %d methods, want at most 25: put what not every runtime can do in an optional interface", n)
	}
	for _, opt := range []reflect.Type{
		reflect.TypeFor[runtime.Imager](), reflect.TypeFor[runtime.Builder](), reflect.TypeFor[runtime.Committer](),
		reflect.TypeFor[runtime.Pauser](), reflect.TypeFor[runtime.Networker](), reflect.TypeFor[runtime.LayerDisker](),
		reflect.TypeFor[runtime.Renamer](), reflect.TypeFor[runtime.LimitUpdater](), reflect.TypeFor[runtime.GPUProvider](),
		reflect.TypeFor[runtime.Attacher](), reflect.TypeFor[runtime.Exporter](),
	} {
		for i := range opt.NumMethod() {
			if _, ok := core.MethodByName(opt.Method(i).Name); ok {
				t.Errorf("%s.%s is in the core too", opt.Name(), opt.Method(i).Name)
			}
		}
	}
}

// everything is the fake with the parts it lacks (commit, build, attach)
// stubbed: a runtime with every optional part.
type everything struct{ *fakeruntime.Runtime }

func (everything) Diff(context.Context, string) ([]runtime.Change, error) { return nil, nil }
func (everything) Commit(context.Context, string, string, runtime.ImageConfig) (string, error) {
	return "sha256:0", nil
}
func (everything) BuildImage(context.Context, io.Reader, string, io.Writer) (string, error) {
	return "", nil
}
func (everything) ImportImage(context.Context, io.Reader, string, []string, string) (string, error) {
	return "", nil
}
func (everything) RunBuildStep(context.Context, runtime.BuildStep) (string, int, error) {
	return "", 0, nil
}
func (everything) Attach(context.Context, string) (io.ReadWriteCloser, error) { return nil, nil }

// coreOnly hides every optional part of the runtime it wraps.
type coreOnly struct{ runtime.Runtime }

// noCommit hides Committer only.
type noCommit struct {
	runtime.Runtime
	runtime.Imager
	runtime.Builder
	runtime.Pauser
	runtime.Networker
	runtime.LayerDisker
	runtime.Renamer
	runtime.LimitUpdater
	runtime.GPUProvider
	runtime.Attacher
	runtime.Exporter
}

func TestCapabilitiesSayWhatARuntimeLacksAndWhy(t *testing.T) {
	fake := everything{fakeruntime.New()}
	all := runtime.CapabilitiesOf(fake)
	if len(all.Lacking()) != 0 || all.Runtime != "fake" {
		t.Errorf("the fake implements every optional part; its capabilities are %+v (lacking %v)", all, all.Lacking())
	}
	for _, x := range runtime.AllCapabilities {
		if err := all.Missing(x); err != nil {
			t.Errorf("Missing(%s) = %v for a runtime that has it", x, err)
		}
	}

	nc := noCommit{fake, fake, fake, fake, fake, fake, fake, fake, fake, fake, fake}
	caps := runtime.CapabilitiesOf(nc)
	if caps.Commit || !caps.Images || !caps.Pause {
		t.Errorf("a runtime without Committer: %+v", caps)
	}
	if got := caps.Lacking(); !reflect.DeepEqual(got, []runtime.Capability{runtime.CapCommit}) {
		t.Errorf("Lacking() = %v, want [commit]", got)
	}
	err := caps.Missing(runtime.CapCommit)
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), `"fake"`) || !strings.Contains(err.Error(), "commit") {
		t.Errorf("Missing(commit) = %v: want sandbox.ErrUnsupported naming the runtime and what it cannot do", err)
	}
	if !sandbox.IsUserError(err) {
		t.Errorf("a missing capability is not a user error, so a model would see an internal error: %v", err)
	}

	b, _ := json.Marshal(runtime.CapabilitiesOf(coreOnly{fake}))
	if want := `{"runtime":"fake","images":false,"build":false,"commit":false,"pause":false,"networks":false,"layer_disk":false,"rename":false,"update_limits":false,"gpu":false,"attach":false,"export":false}`; string(b) != want {
		t.Errorf("a core-only runtime's capabilities: %s\nwant %s", b, want)
	}
}

// TestCompleteFailsWhatIsMissingNamingTheRuntime: Complete reaches the parts
// a runtime has, and the stand-in of one it lacks fails with why, while
// CapabilitiesOf still tells what the runtime itself has.
func TestCompleteFailsWhatIsMissingNamingTheRuntime(t *testing.T) {
	ctx := context.Background()
	fake := fakeruntime.New()
	fake.SetName("kube")
	if caps := runtime.CapabilitiesOf(fake); caps.Commit || caps.Build || caps.Attach || !caps.Images || !caps.Export {
		t.Errorf("the fake's capabilities: %+v; it neither commits, builds nor attaches, and has the rest", caps)
	}
	if every := (everything{fake}); runtime.Complete(every) != runtime.Full(every) {
		t.Errorf("Complete wrapped a runtime that has every part")
	}
	full := runtime.Complete(coreOnly{fake})
	if caps := runtime.CapabilitiesOf(full); caps.Commit || caps.Images || caps.Runtime != "kube" {
		t.Errorf("CapabilitiesOf(Complete(core only)) = %+v, want the core-only runtime's", caps)
	}
	_, err := full.Commit(ctx, "x", "t", runtime.ImageConfig{})
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), `"kube" runtime cannot diff or commit`) {
		t.Errorf("Commit on a runtime without it: %v", err)
	}
	if _, err := full.ImageExists(ctx, "debian"); !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), "images") {
		t.Errorf("ImageExists on a runtime without images: %v", err)
	}
	if err := full.Pause(ctx, "x"); !errors.Is(err, sandbox.ErrUnsupported) {
		t.Errorf("Pause on a runtime without it: %v", err)
	}
	events, errs := full.ImageEvents(ctx)
	if _, open := <-events; open {
		t.Error("the image events of a runtime without images did not end")
	}
	if err := <-errs; !errors.Is(err, sandbox.ErrUnsupported) {
		t.Errorf("the image events' error: %v", err)
	}
	if g, err := full.GPUSupport(ctx); err != nil || g.Method != "" || !strings.Contains(g.Detail, "kube") {
		t.Errorf("GPUSupport without GPUs = %+v, %v: want none, saying which runtime", g, err)
	}
	// What the runtime has still works through it.
	if _, err := full.Create(ctx, runtime.CreateOptions{Image: "none"}); err == nil || errors.Is(err, sandbox.ErrUnsupported) {
		t.Errorf("Create through Complete: %v, want the fake's own error (no such image)", err)
	}
}

// TestTheSeamLinksNoRuntimeSDK: the seam, the fake and the conformance
// suite reach neither the Docker SDK nor the Docker runtime (app/host's
// TestImportDirection checks every other package).
func TestTheSeamLinksNoRuntimeSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{"github.com/sandtray/sandtray/engine/runtime", "github.com/sandtray/sandtray/engine/runtime/fakeruntime",
		"github.com/sandtray/sandtray/engine/runtime/runtimetest"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for dep := range strings.FieldsSeq(string(out)) {
			if strings.HasPrefix(dep, "github.com/moby/") || strings.HasPrefix(dep, "github.com/docker/") ||
				dep == "github.com/sandtray/sandtray/engine/runtime/docker" {
				t.Errorf("%s reaches %s: only engine/runtime/docker may", pkg, dep)
			}
		}
	}
}

// TestTheTypesSpeakSandtraysWords: the seam's types name no runtime.
func TestTheTypesSpeakSandtraysWords(t *testing.T) {
	b, err := os.ReadFile("types.go")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.Contains(strings.ToLower(line), "docker") {
			t.Errorf("types.go:%d speaks of Docker: %s", i+1, strings.TrimSpace(line))
		}
	}
}
