// Package scripttest checks the scripts that start the single-node test cluster
// (make k8s-up, make test-k8s) where that needs no root and no cluster.
package scripttest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestWaitsOfUp runs lib_test.sh: up.sh's node_ready must see a Ready
// node as the API server pretty-prints it, and wait_for must fail with
// what it waited for rather than a shell error. The versions of both that
// failed on the first real node must fail it too, or the check proves nothing.
func TestWaitsOfUp(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out, err := exec.Command("bash", "../lib_test.sh").CombinedOutput()
	if err != nil {
		t.Errorf("lib_test.sh on lib.sh: %v\n%s", err, out)
	}
	out, err = exec.Command("bash", "../lib_test.sh", "testdata/old-waits.sh").CombinedOutput()
	if err == nil {
		t.Fatalf("lib_test.sh passes the old waits, which failed on a real node:\n%s", out)
	}
	for _, want := range []string{"FAIL: node_ready: a Ready node (pretty-printed", "unbound variable"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lib_test.sh on the old waits does not say %q:\n%s", want, out)
		}
	}
}
