package docker_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// testTimeout bounds every test's calls to the daemon, so a wedged daemon
// fails the test instead of hanging the suite.
const testTimeout = 2 * time.Minute

// Limits the tests give their containers and then look for in inspect and
// stats output.
const (
	testMemoryMB  = 128
	testMilliCPUs = 500
	testPidsLimit = 64
)

// testCtx is a context for one test's calls to the daemon.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// createOptions is a sandbox spec as the engine would send it, labelled for
// this test so that dockertest removes the container when the test ends.
func createOptions(t *testing.T) runtime.CreateOptions {
	t.Helper()
	return runtime.CreateOptions{
		Image:     dockertest.Image(t),
		Labels:    dockertest.Labels(t),
		Cmd:       []string{"sleep", "infinity"},
		Workdir:   "/workspace",
		Network:   "none",
		MemoryMB:  testMemoryMB,
		MilliCPUs: testMilliCPUs,
		PidsLimit: testPidsLimit,
	}
}

// startContainer creates and starts a container from o and returns its id.
func startContainer(t *testing.T, c *docker.Client, o runtime.CreateOptions) string {
	t.Helper()
	ctx := testCtx(t)
	id, err := c.Create(ctx, o)
	if err != nil {
		t.Fatalf("Create(%+v): %v", o, err)
	}
	if err := c.Start(ctx, id); err != nil {
		t.Fatalf("Start(%s): %v", id, err)
	}
	return id
}

// newSandbox returns a client and a running hardened container for tests that
// only need somewhere to run things.
func newSandbox(t *testing.T) (*docker.Client, string) {
	t.Helper()
	c := dockertest.Client(t)
	return c, startContainer(t, c, createOptions(t))
}

// run executes cmd in the container and fails the test unless it exits 0.
func run(t *testing.T, c *docker.Client, id string, cmd ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code, err := c.Exec(testCtx(t), id, runtime.ExecOptions{Cmd: cmd, Stdout: &stdout, Stderr: &stderr})
	if err != nil || code != 0 {
		t.Fatalf("Exec(%q) = %d, %v; stderr: %s", cmd, code, err, stderr.String())
	}
	return stdout.String()
}

// absentImage is a well-formed reference no daemon here has or can pull.
const absentImage = "sandtray/no-such-image-for-tests:0"

func TestImages(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	image := dockertest.Image(t)

	if ok, err := c.ImageExists(ctx, image); err != nil || !ok {
		t.Errorf("ImageExists(%s) = %v, %v; want true", image, ok, err)
	}
	if ok, err := c.ImageExists(ctx, absentImage); err != nil || ok {
		t.Errorf("ImageExists(%s) = %v, %v; want false, nil", absentImage, ok, err)
	}
	if id, err := c.ImageID(ctx, image); err != nil || !strings.HasPrefix(id, "sha256:") {
		t.Errorf("ImageID(%s) = %q, %v; want a sha256 id", image, id, err)
	}
	if _, err := c.ImageID(ctx, absentImage); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("ImageID(%s): err = %v, want ErrNotFound", absentImage, err)
	}
	absent := createOptions(t)
	absent.Image = absentImage
	if _, err := c.Create(ctx, absent); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Create from %s: err = %v, want ErrNotFound", absentImage, err)
	}
}

func TestPullImageFailures(t *testing.T) {
	c := dockertest.Client(t)
	tests := []struct {
		ref   string
		kinds []error // any of them
	}{
		// No registry answers here; elsewhere the image does not exist.
		{absentImage, []error{sandbox.ErrNotFound, sandbox.ErrUnavailable}},
		{"Not A Valid Reference", []error{sandbox.ErrInvalid}},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			// The timeout keeps a registry that hangs from hanging the test.
			ctx, cancel := context.WithTimeout(testCtx(t), 60*time.Second)
			defer cancel()
			err := c.PullImage(ctx, tc.ref, nil)
			if err == nil {
				t.Fatalf("PullImage(%q) succeeded", tc.ref)
			}
			if !errorsIsAny(err, tc.kinds) {
				t.Errorf("PullImage(%q): err = %v, want one of %v", tc.ref, err, tc.kinds)
			}
			if !strings.Contains(err.Error(), tc.ref) {
				t.Errorf("error %q does not name the image", err)
			}
		})
	}
}

func TestServerInfo(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	v, err := c.ServerVersion(ctx)
	if err != nil || !strings.Contains(v, "(API 1.") {
		t.Errorf("ServerVersion = %q, %v; want \"<version> (API 1.xx)\"", v, err)
	}
	runtimes, err := c.Runtimes(ctx)
	if err != nil {
		t.Fatalf("Runtimes: %v", err)
	}
	if !strings.Contains(strings.Join(runtimes, " "), "runc") {
		t.Errorf("Runtimes = %v, want runc among them", runtimes)
	}
}

func errorsIsAny(err error, kinds []error) bool {
	for _, k := range kinds {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
