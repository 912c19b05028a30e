package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

func TestCommit(t *testing.T) {
	t.Parallel()
	repo, track := dockertest.ImageRepo(t) // first, so its cleanup runs after the containers'
	te := newTestEngine(t)
	ctx := context.Background()
	baseImage := te.cfg.DefaultImage
	baseID, err := te.docker.ImageID(ctx, baseImage)
	if err != nil {
		t.Fatal(err)
	}
	info := te.create(t, sandbox.CreateRequest{Name: "tocommit", Env: map[string]string{"GREETING": "hello"}})
	te.command(t, info.ID, "echo app > app.py && echo note > /etc/sandtray-note")

	tag := repo + ":v1"
	var steps []string
	res, err := te.Commit(ctx, te.owner, info.ID, sandbox.CommitRequest{Image: tag}, func(_, _ float64, msg string) { steps = append(steps, msg) })
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if res.Image != tag || !strings.HasPrefix(res.ImageID, "sha256:") || len(steps) != 2 {
		t.Errorf("commit = %+v with progress %q; want %s, an image id and two steps", res, steps, tag)
	}
	img, err := te.docker.InspectImage(ctx, tag)
	if err != nil {
		t.Fatal(err)
	}
	checkCommitLabels(t, img, info.Name)
	if !strings.Contains(strings.Join(img.Env, " "), "GREETING=hello") || img.Workdir != "/workspace" {
		t.Errorf("image env %v workdir %q, want GREETING=hello and /workspace", img.Env, img.Workdir)
	}

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			req  sandbox.CommitRequest
			kind error
		}{
			{sandbox.CommitRequest{Image: tag}, sandbox.ErrConflict},
			{sandbox.CommitRequest{Image: "localhost:5000/" + repo + ":v1"}, sandbox.ErrForbidden},
			{sandbox.CommitRequest{Image: "Not A Name"}, sandbox.ErrInvalid},
			{sandbox.CommitRequest{Image: ""}, sandbox.ErrInvalid},
		} {
			_, err := te.Commit(ctx, te.owner, info.ID, tc.req, nil)
			wantKind(t, err, tc.kind)
		}
		if id, err := te.docker.ImageID(ctx, baseImage); err != nil || id != baseID {
			t.Errorf("base image %s is now %s (%v), was %s", baseImage, id, err, baseID)
		}
	})

	t.Run("a name outside the namespace goes under it", func(t *testing.T) {
		name := strings.TrimPrefix(repo, "sandtray-test/") + ":outside" // saved as repo:outside
		res, err := te.Commit(ctx, te.owner, info.ID, sandbox.CommitRequest{Image: name, Overwrite: true}, nil)
		if err != nil || res.Image != "sandtray-test/"+name {
			t.Fatalf("commit %s = %+v, %v; want it saved as sandtray-test/%s", name, res, err, name)
		}
		if _, err := te.docker.ImageID(ctx, name); err == nil {
			t.Errorf("the commit wrote %s outside the namespace", name)
		}
	})

	t.Run("overwrite moves the tag and removes the image it left", func(t *testing.T) {
		te.command(t, info.ID, "echo v2 > app.py")
		var steps []string
		res2, err := te.Commit(ctx, te.owner, info.ID, sandbox.CommitRequest{Image: tag, Overwrite: true}, func(_, _ float64, msg string) { steps = append(steps, msg) })
		if err != nil {
			t.Fatalf("commit with overwrite: %v", err)
		}
		track(res.ImageID) // no longer tagged, so the repo cleanup would miss it if it stayed
		if res2.ImageID == res.ImageID {
			t.Error("overwrite kept the old image")
		}
		if _, err := te.docker.InspectImage(ctx, res.ImageID); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("the image the tag left, which nothing used, is still there (%v): a dangling <none> image", err)
		}
		if last := steps[len(steps)-1]; !strings.Contains(last, "removed the image "+tag+" named before") {
			t.Errorf("progress %q does not say the replaced image was removed", last)
		}
	})

	t.Run("containers of the image have the files and are not managed", func(t *testing.T) {
		from := te.create(t, sandbox.CreateRequest{Image: tag})
		if got := te.command(t, from.ID, "cat app.py /etc/sandtray-note").Stdout; got != "v2\nnote\n" {
			t.Errorf("files in a sandbox of the committed image = %q", got)
		}
		plain := runtime.CreateOptions{Image: tag, Labels: dockertest.Labels(t), Cmd: []string{"sleep", "60"},
			MemoryMB: 64, MilliCPUs: 100, PidsLimit: 32}
		if _, err := te.docker.Create(ctx, plain); err != nil {
			t.Fatal(err)
		}
		managed, err := te.docker.List(ctx, map[string]string{sandbox.LabelManaged: "true", sandbox.LabelTest: plain.Labels[sandbox.LabelTest]}, true)
		if err != nil || len(managed) != 0 {
			t.Errorf("a plain container of the committed image looks managed: %v, %v", managed, err)
		}
	})

	t.Run("the image the tag left stays while a container uses it or a tag names it", func(t *testing.T) {
		used, err := te.docker.ImageID(ctx, tag) // the sandbox and the plain container above run it
		if err != nil {
			t.Fatal(err)
		}
		track(used)
		res3, err := te.Commit(ctx, te.owner, info.ID, sandbox.CommitRequest{Image: tag, Overwrite: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := te.docker.InspectImage(ctx, used); err != nil {
			t.Errorf("an overwrite removed the image containers run: %v", err)
		}
		other := repo + ":other"
		if err := te.docker.TagImage(ctx, res3.ImageID, other); err != nil {
			t.Fatal(err)
		}
		if _, err := te.Commit(ctx, te.owner, info.ID, sandbox.CommitRequest{Image: tag, Overwrite: true}, nil); err != nil {
			t.Fatal(err)
		}
		if id, err := te.docker.ImageID(ctx, other); err != nil || id != res3.ImageID {
			t.Errorf("an overwrite removed the image another tag names: %s now names %s (%v)", other, id, err)
		}
	})
}

// checkCommitLabels wants the commit labels and no io.sandtray.* label with
// a value: Docker copies the container's label keys, which Commit blanks.
func checkCommitLabels(t *testing.T, img runtime.Image, name string) {
	t.Helper()
	if img.Labels[sandbox.LabelCommittedFrom] != name {
		t.Errorf("label %s = %q, want %q", sandbox.LabelCommittedFrom, img.Labels[sandbox.LabelCommittedFrom], name)
	}
	if _, err := time.Parse(time.RFC3339, img.Labels[sandbox.LabelCommittedAt]); err != nil {
		t.Errorf("label %s = %q: %v", sandbox.LabelCommittedAt, img.Labels[sandbox.LabelCommittedAt], err)
	}
	// The engine that committed it, and the image it was made on (F64, F59).
	if len(img.Labels[sandbox.LabelCommittedBy]) != 32 || !strings.HasPrefix(img.Labels[sandbox.LabelCommittedOn], "sha256:") {
		t.Errorf("labels %s = %q and %s = %q, want the engine's identity and an image id", sandbox.LabelCommittedBy, img.Labels[sandbox.LabelCommittedBy],
			sandbox.LabelCommittedOn, img.Labels[sandbox.LabelCommittedOn])
	}
	commit := []string{sandbox.LabelCommittedFrom, sandbox.LabelCommittedAt, sandbox.LabelCommittedBy, sandbox.LabelCommittedOn}
	for k, v := range img.Labels {
		if strings.HasPrefix(k, "io.sandtray.") && !slices.Contains(commit, k) && v != "" {
			t.Errorf("committed image carries %s=%q", k, v)
		}
	}
}
