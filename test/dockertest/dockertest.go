// Package dockertest is test support for code that runs against the real
// Docker daemon: a client that skips the test when no daemon answers, the
// test image, and per-test labels whose containers are removed when the test
// ends. Only _test files import it.
package dockertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

const (
	// RequireEnv, set to "1", turns "no daemon" and "no test image" from a
	// skip into a failure (.ci/run sets it).
	RequireEnv = "SANDTRAY_REQUIRE_DOCKER"
	// ImageEnv names the image tests run sandboxes from.
	ImageEnv = "SANDTRAY_TEST_IMAGE"
	// DefaultImage is the test image when ImageEnv is unset.
	DefaultImage = "sandtray/sandbox:latest"
)

// cleanupTimeout bounds the removal of a test's containers.
const cleanupTimeout = 60 * time.Second

// Client returns a client of the local daemon, closed when the test ends. It
// skips the test when no daemon answers, or fails it when RequireEnv is "1".
func Client(t testing.TB) *docker.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := docker.New(ctx)
	if err != nil {
		unavailable(t, "no Docker daemon: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Image returns the image tests create sandboxes from: $SANDTRAY_TEST_IMAGE
// or DefaultImage. It skips the test (or fails it, under RequireEnv) when the
// daemon or the image is missing.
func Image(t testing.TB) string {
	t.Helper()
	ref := os.Getenv(ImageEnv)
	if ref == "" {
		ref = DefaultImage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ok, err := Client(t).ImageExists(ctx, ref)
	if err != nil {
		t.Fatalf("look for test image %s: %v", ref, err)
	}
	if !ok {
		unavailable(t, "test image %s is missing: run make test-image", ref)
	}
	return ref
}

// Labels returns {sandbox.LabelTest: <unique to this test run>} and removes,
// when the test ends, every container carrying it, so a test cleans up even
// the containers it leaked. Tests put these labels on everything they create.
func Labels(t testing.TB) map[string]string {
	t.Helper()
	labels := map[string]string{sandbox.LabelTest: t.Name() + "/" + randomHex()}
	t.Cleanup(func() { removeLabelled(t, labels) })
	return labels
}

// removeLabelled force-removes the containers carrying labels. It uses a
// client of its own: cleanups run last-in first-out, so the test's client may
// already be closed.
func removeLabelled(t testing.TB, labels map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	c, err := docker.New(ctx)
	if err != nil {
		t.Logf("cleanup: no Docker daemon to remove containers labelled %v: %v", labels, err)
		return
	}
	defer c.Close()
	ctrs, err := c.List(ctx, labels, true)
	if err != nil {
		t.Errorf("cleanup: list containers labelled %v: %v", labels, err)
		return
	}
	for _, ctr := range ctrs {
		if err := c.Remove(ctx, ctr.ID); err != nil && !goneSoon(ctx, c, labels, ctr.ID) {
			t.Errorf("cleanup: remove container %s: %v", ctr.ID, err)
		}
	}
}

// goneSoon reports whether container id leaves the list of labels before
// ctx ends: a removal the engine started (its reaper, a delete) is still
// under way when the cleanup's own is refused as "already in progress".
func goneSoon(ctx context.Context, c *docker.Client, labels map[string]string, id string) bool {
	for ctx.Err() == nil {
		ctrs, err := c.List(ctx, labels, true)
		if err != nil {
			return false
		}
		if !slices.ContainsFunc(ctrs, func(ctr runtime.Container) bool { return ctr.ID == id }) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// unavailable skips the test, or fails it when RequireEnv is "1".
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf(format+" ("+RequireEnv+"=1)", args...)
	}
	t.Skipf(format, args...)
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ImageRepo returns a repository name unique to this test
// ("sandtray-test/<hex>") for the images it commits or builds, and removes,
// when the test ends, every image tagged in it and every id passed to the
// returned track function (an image whose tag moved elsewhere).
func ImageRepo(t testing.TB) (repo string, track func(id string)) {
	t.Helper()
	repo = "sandtray-test/" + randomHex()
	var ids []string
	t.Cleanup(func() { removeImages(t, repo, ids) })
	return repo, func(id string) { ids = append(ids, id) }
}

// RemoveImagesLater returns add: every image (reference or id) passed to
// add is removed when the test ends, with its untagged parents. Call it
// before the engine and Labels, so that its cleanup runs after theirs
// (cleanups run last-in first-out): Docker only untags an image a
// container still uses, or that a live engine's pool starts again, and it
// would stay behind as a dangling <none> image.
func RemoveImagesLater(t testing.TB) (add func(ref string)) {
	t.Helper()
	var refs []string
	t.Cleanup(func() { removeImages(t, "", refs) })
	return func(ref string) { refs = append(refs, ref) }
}

// removeImages removes the images of repo (none when "") and the tracked
// ids, with a client of its own (see removeLabelled). Containers go first, so the test's
// containers must be removed by an earlier cleanup: register ImageRepo before
// Labels, since cleanups run last-in first-out.
func removeImages(t testing.TB, repo string, ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	c, err := docker.New(ctx)
	if err != nil {
		t.Logf("cleanup: no Docker daemon to remove images of %s: %v", repo, err)
		return
	}
	defer c.Close()
	var tagged []string
	if repo != "" {
		if tagged, err = c.ListImages(ctx, repo); err != nil {
			t.Errorf("cleanup: list images of %s: %v", repo, err)
		}
	}
	for _, id := range append(tagged, ids...) {
		if err := c.RemoveImage(ctx, id); err != nil {
			t.Errorf("cleanup: remove image %s: %v", id, err)
		}
	}
}
