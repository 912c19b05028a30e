package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/test/dockertest"
)

// TestImageStatus runs `sandtray image status` as a user would: the config's
// image, present, says so and how it was made; a missing image is exit 1
// with what to do (build Sandtray's own, pull any other); a wrong
// subcommand or source says what is accepted. (`image build` itself is
// TestBuildFromTheMirror's, as it takes minutes.)
func TestImageStatus(t *testing.T) {
	image := dockertest.Image(t)
	env, _ := userEnv(t, image)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), exitStatus(err)
	}
	if out, code := run("image", "status"); code != 0 || !strings.HasPrefix(out, image+": present, sha256:") {
		t.Errorf("status of the config's image: exit %d\n%s", code, out)
	}
	if out, code := run("image", "status", "--tag", "sandtray-test/absent:1"); code != 1 ||
		!strings.Contains(out, "sandtray-test/absent:1 is not on this Docker; pull or build it (`docker pull sandtray-test/absent:1`)") {
		t.Errorf("status of a missing image: exit %d\n%s", code, out)
	}
	if out, code := run("image", "rebuild"); code != 1 || !strings.Contains(out, "image needs build or status") {
		t.Errorf("a wrong subcommand: exit %d\n%s", code, out)
	}
	if out, code := run("image", "build", "--source", "ftp"); code != 1 || !strings.Contains(out, "use auto, registry or mirror") {
		t.Errorf("a wrong source: exit %d\n%s", code, out)
	}
}
