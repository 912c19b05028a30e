package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestActionsTheRuntimeCannotDoAreOffSayingWhy: when the engine's status
// says its runtime cannot commit, Commit…, Dockerfile… and the snapshot
// buttons are disabled with the runtime's why shown beside them, and a tap
// reaches no backend; when a later status says it can, they are back.
func TestActionsTheRuntimeCannotDoAreOffSayingWhy(t *testing.T) {
	h, _ := snapHarness(t)
	why := `the "kube" runtime cannot diff or commit a sandbox's filesystem`
	lacking := snapshot(alpha, beta)
	lacking.Docker.Runtime = "kube"
	lacking.Docker.Lacks = map[string]string{"commit": why}
	h.feed(lacking)

	a, s := h.u.detail.actions, h.u.detail.snaps
	for name, b := range map[string]interface{ Disabled() bool }{"Commit…": a.commit, "Dockerfile…": a.export,
		"Take snapshot": s.take, "Fork sandbox": s.fork, "Restore…": s.restore} {
		if !b.Disabled() {
			t.Errorf("%s is enabled on a runtime that cannot commit", name)
		}
	}
	if !a.why.Visible() || !strings.Contains(a.why.Text, why) || !strings.Contains(a.why.Text, "Commit…") {
		t.Errorf("the action bar says %q (visible %v), want why Commit… is off", a.why.Text, a.why.Visible())
	}
	if !s.empty.Visible() || !strings.Contains(s.empty.Text, why) {
		t.Errorf("the Snapshots tab says %q (visible %v), want why snapshots are off", s.empty.Text, s.empty.Visible())
	}
	test.Tap(a.commit)
	test.Tap(s.take)
	h.flush()
	if calls := h.b.taken(); len(calls) != 0 {
		t.Errorf("disabled buttons reached the backend: %v", calls)
	}
	if got := DockerText(lacking.Docker); !strings.HasPrefix(got, "Runtime kube connected") {
		t.Errorf("the status line names another runtime as %q", got)
	}

	h.feed(snapshot(alpha, beta))
	if a.commit.Disabled() || a.export.Disabled() || s.take.Disabled() || s.fork.Disabled() || a.why.Visible() {
		t.Error("on a runtime that can commit, the actions stay off or the why stays shown")
	}
	if s.empty.Text != noSnapshots {
		t.Errorf("the Snapshots tab still says %q", s.empty.Text)
	}
}

// TestDockerTextNamesDockerByDefault: the status line of the Docker
// runtime reads as before.
func TestDockerTextNamesDockerByDefault(t *testing.T) {
	if got := DockerText(sandbox.DockerStatus{Connected: true, Runtime: "docker", Host: "unix:///s"}); got != "Docker connected · unix:///s" {
		t.Errorf("DockerText = %q", got)
	}
}
