package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestCopyFromSandboxKeepsHardLinkedFiles: a file with two names in the
// sandbox arrives on the host as two regular files, never as a link, and
// neither is silently dropped.
func TestCopyFromSandboxKeepsHardLinkedFiles(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "mkdir d && printf twin > d/a && ln d/a d/b")
	res, err := te.CopyFromSandbox(ctx, te.owner, id, "d", te.cfg.Host.AllowedRoots[0])
	if err != nil || res.Files != 2 {
		t.Fatalf("copy: %+v, %v; want both names copied", res, err)
	}
	dir := filepath.Join(te.cfg.Host.AllowedRoots[0], "d")
	for _, name := range []string{"a", "b"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(b, []byte("twin")) {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	a, _ := os.Stat(filepath.Join(dir, "a"))
	b, _ := os.Stat(filepath.Join(dir, "b"))
	if os.SameFile(a, b) {
		t.Error("the two names are hard-linked on the host; they must be separate files")
	}
}
