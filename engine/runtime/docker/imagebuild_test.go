package docker_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// TestBuildStepExportAndImport: what the image builder does with Docker. A
// build step runs its command to the end with its output and exit code,
// without a network; its container's files come back as a tar; a tar
// becomes an image with the config asked for; and a step whose image is
// missing leaves no container.
func TestBuildStepExportAndImport(t *testing.T) {
	c := dockertest.Client(t)
	repo, _ := dockertest.ImageRepo(t)
	labels := dockertest.Labels(t)
	ctx := testCtx(t)
	var out bytes.Buffer
	id, code, err := c.RunBuildStep(ctx, runtime.BuildStep{Image: dockertest.Image(t), Labels: labels, Output: &out,
		Cmd: []string{"sh", "-c", "echo built > /built.txt; cat /sys/class/net/*/address | wc -l; echo to-stderr >&2; exit 3"}})
	if err != nil {
		t.Fatalf("RunBuildStep: %v", err)
	}
	defer c.Remove(ctx, id)
	// stdout and stderr reach the log apart, so their lines may come in either order.
	lines := strings.Fields(out.String())
	slices.Sort(lines)
	if code != 3 || !slices.Equal(lines, []string{"1", "to-stderr"}) {
		t.Errorf("build step: exit %d, output %q; want exit 3, both streams, and only the loopback interface's address", code, out.String())
	}
	exp, err := c.ExportContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	// Keep only the step's file: the image need not run, only exist.
	var rootfs bytes.Buffer
	tr, tw := tar.NewReader(exp), tar.NewWriter(&rootfs)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimPrefix(h.Name, "/") == "built.txt" {
			tw.WriteHeader(h)
			io.Copy(tw, tr)
		}
	}
	tw.Close()
	if rootfs.Len() < 1024 {
		t.Fatal("the export has no /built.txt")
	}
	ref := repo + ":imported"
	imgID, err := c.ImportImage(ctx, &rootfs, ref, []string{"WORKDIR /workspace", "ENV LANG=C.UTF-8"}, "a test import")
	if err != nil {
		t.Fatalf("ImportImage: %v", err)
	}
	det, err := c.ImageDetails(ctx, ref)
	if err != nil || det.ID != imgID || det.Comment != "a test import" || det.Created.IsZero() {
		t.Errorf("ImageDetails(%s) = %+v, %v; want id %s and the message", ref, det, err, imgID)
	}
	img, err := c.InspectImage(ctx, ref)
	if err != nil || img.Workdir != "/workspace" || !strings.Contains(strings.Join(img.Env, " "), "LANG=C.UTF-8") {
		t.Errorf("imported config: %+v, %v; want the changes applied", img, err)
	}
	if _, err := c.ImageDetails(ctx, repo+":none"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("details of a missing image: %v; want ErrNotFound", err)
	}
	if _, _, err := c.RunBuildStep(ctx, runtime.BuildStep{Image: repo + ":none", Labels: labels, Cmd: []string{"true"}}); err == nil {
		t.Error("a build step in a missing image ran")
	}
	if left, _ := c.List(ctx, labels, true); len(left) != 1 {
		t.Errorf("containers left: %d; want only the finished step's", len(left))
	}
}
