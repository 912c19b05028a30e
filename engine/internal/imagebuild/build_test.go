package imagebuild_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/internal/imagebuild"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/test/dockertest"
)

// firstTools runs a model's first tools in the image (curl, git, jq,
// unzip), printing firstToolsOK when each works.
const firstTools = `echo '{"a":[6,7]}' | jq -c '.a' && git --version >/dev/null && curl --version >/dev/null && unzip -v >/dev/null && echo tools`

const firstToolsOK = "[6,7]\ntools\n"

// TestBuildFromTheMirror builds the sandbox image from Debian's mirror,
// under a test tag, and runs Python, Node.js, gcc and a model's first
// tools (curl, git, jq, unzip) in it. It reaches the
// mirror and takes minutes (about 40 on a loaded 2-core machine), so it
// runs only with SANDTRAY_TEST_IMAGE_BUILD=1.
func TestBuildFromTheMirror(t *testing.T) {
	if os.Getenv("SANDTRAY_TEST_IMAGE_BUILD") != "1" {
		t.Skip("set SANDTRAY_TEST_IMAGE_BUILD=1 to build the image from Debian's mirror (minutes)")
	}
	c := dockertest.Client(t)
	repo, _ := dockertest.ImageRepo(t)
	labels := dockertest.Labels(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Minute)
	defer cancel()
	var steps []string
	res, err := imagebuild.Build(ctx, c, imagebuild.Options{Tag: repo + ":built", Source: imagebuild.SourceMirror, Labels: labels,
		TempDir: t.TempDir(), Progress: func(p imagebuild.Progress) {
			if len(steps) == 0 || steps[len(steps)-1] != p.Step {
				steps = append(steps, p.Step)
			}
		}})
	if err != nil {
		t.Fatalf("build: %v\nsteps: %v", err, steps)
	}
	if res.Source != imagebuild.SourceMirror || res.Packages < 100 {
		t.Errorf("result %+v", res)
	}
	var out bytes.Buffer
	id, code, err := c.RunBuildStep(ctx, runtime.BuildStep{Image: repo + ":built", Labels: labels, Output: &out,
		Cmd: []string{"sh", "-c", `python3 -c 'print(6*7)' && node -e 'console.log(6*7)' && printf 'int main(){return 42;}' > /tmp/a.c && gcc /tmp/a.c -o /tmp/a; /tmp/a; echo $?; test ! -e /var/cache/sandtray && pwd && ` + firstTools}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove(ctx, id)
	if code != 0 || out.String() != "42\n42\n42\n/workspace\n"+firstToolsOK {
		t.Errorf("in the image: exit %d, output %q", code, out.String())
	}
	if !strings.HasPrefix(steps[0], "Reading bookworm's package index") {
		t.Errorf("steps %v", steps)
	}
}
