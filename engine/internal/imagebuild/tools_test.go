package imagebuild

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/packaging/images"
)

// firstToolPackages are what a model reaches for first in a sandbox.
var firstToolPackages = []string{"curl", "git", "jq", "unzip"}

// TestEveryBuildHasAModelsFirstTools: each way the sandbox image is made
// (the Dockerfile, the mirror build, the offline script) installs curl,
// git, jq and unzip.
func TestEveryBuildHasAModelsFirstTools(t *testing.T) {
	offline, err := os.ReadFile("../../../packaging/images/build-offline.sh")
	if err != nil {
		t.Fatal(err)
	}
	var packages string
	for line := range strings.Lines(string(offline)) {
		if p, ok := strings.CutPrefix(line, "packages="); ok {
			packages = strings.TrimSpace(p)
		}
	}
	for _, p := range firstToolPackages {
		if !slices.Contains(Wanted, p) {
			t.Errorf("the mirror build does not install %s", p)
		}
		if !slices.Contains(strings.Split(packages, ","), p) {
			t.Errorf("build-offline.sh does not install %s (packages=%s)", p, packages)
		}
		if !slices.Contains(strings.Fields(string(images.Dockerfile)), p) {
			t.Errorf("the Dockerfile does not install %s", p)
		}
	}
}
