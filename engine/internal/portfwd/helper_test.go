package portfwd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// pathOpener runs commands locally with PATH limited to dir, standing in for
// an image that has only what dir holds.
type pathOpener struct{ path string }

func (o pathOpener) Open(ctx context.Context, cmd []string) (Stream, error) {
	s, err := localOpener{}.Open(ctx, append([]string{"/usr/bin/env", "-i", "PATH=" + o.path}, cmd...))
	return s, err
}

func TestProbe(t *testing.T) {
	if h, err := Probe(context.Background(), localOpener{}); err != nil || h != HelperPython3 {
		t.Errorf("Probe on a host with python3 = %q, %v; want python3", h, err)
	}
	// An "image" with sh, bash and cat but no python3: a folder of links as PATH.
	dir := t.TempDir()
	for _, name := range []string{"sh", "bash", "cat"} {
		linkTool(t, dir, name)
	}
	if h, err := Probe(context.Background(), pathOpener{dir}); err != nil || h != HelperBash {
		t.Errorf("Probe with only sh, bash and cat = %q, %v; want bash", h, err)
	}
	bare := t.TempDir()
	linkTool(t, bare, "sh")
	_, err := Probe(context.Background(), pathOpener{bare})
	if !errors.Is(err, ErrNoHelper) || !errors.Is(err, sandbox.ErrUnsupported) {
		t.Errorf("Probe with only sh: %v; want ErrNoHelper, unsupported", err)
	}
}

func linkTool(t *testing.T, dir, name string) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s on this host", name)
	}
	if err := os.Symlink(path, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}
