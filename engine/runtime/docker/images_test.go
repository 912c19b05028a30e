package docker_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

func TestNetworkConnectDisconnect(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	networks := func() []string {
		t.Helper()
		ctr, err := c.Inspect(ctx, id)
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		return ctr.Networks
	}
	if got := networks(); !cmp.Equal(got, []string{"none"}) {
		t.Fatalf("networks at start = %v, want [none]", got)
	}
	// Docker refuses a second network next to "none"; that is why the engine
	// swaps them.
	if err := c.ConnectNetwork(ctx, id, "bridge"); err == nil {
		t.Fatal("ConnectNetwork(bridge) next to none succeeded; the engine's swap is not needed on this daemon")
	}
	if err := c.DisconnectNetwork(ctx, id, "none"); err != nil {
		t.Fatalf("DisconnectNetwork(none): %v", err)
	}
	if err := c.ConnectNetwork(ctx, id, "bridge"); err != nil {
		t.Fatalf("ConnectNetwork(bridge): %v", err)
	}
	if got := networks(); !cmp.Equal(got, []string{"bridge"}) {
		t.Fatalf("networks after the swap = %v, want [bridge]", got)
	}
	// "bridge" is Sandtray's own network, not Docker's default one.
	raw, err := c.InspectRaw(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"`+docker.BridgeNetwork+`"`) || strings.Contains(string(raw), `"Networks":{"bridge"`) {
		t.Errorf("after ConnectNetwork(bridge) the container is not on %s alone:\n%s", docker.BridgeNetwork, raw)
	}
	if out := run(t, c, id, "cat", "/proc/net/route"); !strings.Contains(out, "eth0") {
		t.Errorf("no eth0 route after connecting bridge:\n%s", out)
	}
	if err := c.DisconnectNetwork(ctx, id, "bridge"); err != nil {
		t.Fatalf("DisconnectNetwork(bridge): %v", err)
	}
	if err := c.ConnectNetwork(ctx, id, "none"); err != nil {
		t.Fatalf("ConnectNetwork(none): %v", err)
	}
	if got := networks(); !cmp.Equal(got, []string{"none"}) {
		t.Errorf("networks after restoring = %v, want [none]", got)
	}
	if out := run(t, c, id, "cat", "/proc/net/route"); strings.Contains(out, "eth0") {
		t.Errorf("eth0 route left after restoring none:\n%s", out)
	}
	if err := c.DisconnectNetwork(ctx, id, "no-such-network-for-tests"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("DisconnectNetwork(missing network): err = %v, want ErrNotFound", err)
	}
}

func TestCommitAndInspectImage(t *testing.T) {
	repo, _ := dockertest.ImageRepo(t)
	c, id := newSandbox(t)
	ctx := testCtx(t)
	run(t, c, id, "sh", "-c", "echo committed > /workspace/note")

	tag := repo + ":v1"
	labels := map[string]string{"io.sandtray.committed-from": "box", "other": "x"}
	imgID, err := c.Commit(ctx, id, tag, runtime.ImageConfig{Labels: labels, Cmd: []string{"/bin/sh"}, Workdir: "/workspace"})
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	img, err := c.InspectImage(ctx, tag)
	if err != nil {
		t.Fatalf("InspectImage(%s): %v", tag, err)
	}
	if img.ID != imgID || !cmp.Equal(img.RepoTags, []string{tag}) {
		t.Errorf("image = %s %v, want %s [%s]", img.ID, img.RepoTags, imgID, tag)
	}
	// The labels given, and the container's own (the test label) blanked.
	want := map[string]string{"io.sandtray.committed-from": "box", "other": "x", sandbox.LabelTest: ""}
	if diff := cmp.Diff(want, img.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !cmp.Equal(img.Cmd, []string{"/bin/sh"}) || img.Workdir != "/workspace" {
		t.Errorf("config Cmd %v Workdir %q, want [/bin/sh] /workspace", img.Cmd, img.Workdir)
	}
	o := createOptions(t)
	o.Image = tag
	other := startContainer(t, c, o)
	if got := run(t, c, other, "cat", "/workspace/note"); got != "committed\n" {
		t.Errorf("file in a container of the committed image = %q", got)
	}
	if ids, err := c.ListImages(ctx, repo); err != nil || !cmp.Equal(ids, []string{imgID}) {
		t.Errorf("ListImages(%s) = %v, %v; want [%s]", repo, ids, err, imgID)
	}
	if _, err := c.InspectImage(ctx, absentImage); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("InspectImage(absent): err = %v, want ErrNotFound", err)
	}
}

func TestBuildAndRemoveImage(t *testing.T) {
	repo, _ := dockertest.ImageRepo(t)
	c := dockertest.Client(t)
	ctx := testCtx(t)
	tag := repo + ":built"
	dockerfile := "FROM " + dockertest.Image(t) + "\nCOPY hello /hello\nRUN test -f /hello\n"
	var out bytes.Buffer
	id, err := c.BuildImage(ctx, buildContext(t, map[string]string{"Dockerfile": dockerfile, "hello": "hi"}), tag, &out)
	if err != nil {
		t.Fatalf("BuildImage: %v\n%s", err, out.String())
	}
	if got, err := c.ImageID(ctx, tag); err != nil || got != id {
		t.Errorf("ImageID(%s) = %s, %v; want %s", tag, got, err, id)
	}
	if !strings.Contains(out.String(), "Step 2/3") {
		t.Errorf("build output has no steps:\n%s", out.String())
	}

	failing := "FROM " + dockertest.Image(t) + "\nENV STEP=two\nRUN exit 3\n"
	out.Reset()
	if _, err := c.BuildImage(ctx, buildContext(t, map[string]string{"Dockerfile": failing}), repo+":broken", &out); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("BuildImage of a failing step: err = %v, want ErrInvalid", err)
	}
	// " ---> id" after each step: the base's, then the ENV step's image,
	// which the failure must not leave behind as a dangling image.
	ids := regexp.MustCompile(`(?m)^ ---> ([0-9a-f]{12})$`).FindAllStringSubmatch(out.String(), -1)
	if len(ids) < 2 {
		t.Fatalf("no image id for the ENV step in the build output:\n%s", out.String())
	}
	if _, err := c.InspectImage(ctx, ids[1][1]); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("the image of the step before the failing one is still there (%v): a dangling <none> image", err)
	}
	if _, err := c.InspectImage(ctx, dockertest.Image(t)); err != nil {
		t.Errorf("the base image went too: %v", err)
	}

	if err := c.RemoveImage(ctx, tag); err != nil {
		t.Fatalf("RemoveImage: %v", err)
	}
	if ok, err := c.ImageExists(ctx, tag); err != nil || ok {
		t.Errorf("ImageExists after RemoveImage = %v, %v", ok, err)
	}
	if err := c.RemoveImage(ctx, tag); err != nil {
		t.Errorf("RemoveImage of a removed image: %v, want nil", err)
	}
}

// buildContext tars files (name → content) as a build context.
func buildContext(t *testing.T, files map[string]string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, content := range files {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), ModTime: time.Now(), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}
