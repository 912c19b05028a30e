package engine

import (
	"context"
	"github.com/sandtray/sandtray/engine/internal/snapshot"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// snapshotImages lists the images of te's snapshots and forks on the
// daemon, and removes them when the test ends (the test's containers are
// removed behind the engine's back, which then cannot).
func snapshotImages(t *testing.T, te *testEngine) func() []runtime.LabeledImage {
	list := func() []runtime.LabeledImage {
		imgs, err := te.docker.ImagesLabeled(context.Background(), map[string]string{snapshot.LabelEngine: te.Engine.cfg().engine})
		if err != nil {
			t.Fatal(err)
		}
		return imgs
	}
	t.Cleanup(func() { removeSnapshotImages(te.Engine) })
	return list
}

// fakePackage builds and installs a package with dpkg, offline.
const fakePackage = `cd /tmp && mkdir -p pkg/DEBIAN pkg/usr/share/sandtray-fake && echo hi > pkg/usr/share/sandtray-fake/f && ` +
	`printf 'Package: sandtray-fake\nVersion: 1.0\nArchitecture: all\nMaintainer: x <x@y>\nDescription: x\n' > pkg/DEBIAN/control && ` +
	`dpkg-deb -b pkg fake.deb >/dev/null && dpkg -i fake.deb >/dev/null && rm -r pkg fake.deb && cd - >/dev/null`

// removeSnapshotImages deletes e's sandboxes (which removes their
// snapshots) and then every image left with its label (one whose removal
// Docker deferred, see dropImage, outlives the test's process otherwise).
func removeSnapshotImages(e *Engine) {
	ctx := context.Background()
	list, _ := e.List(ctx)
	for _, info := range list {
		e.Delete(ctx, sandbox.Owner{}, info.ID)
	}
	imgs, _ := e.docker.ImagesLabeled(ctx, map[string]string{snapshot.LabelEngine: e.cfg().engine})
	for _, img := range imgs {
		e.docker.RemoveImage(ctx, img.ID)
	}
}

func (te *testEngine) out(t *testing.T, id, cmd string) string {
	t.Helper()
	r := te.command(t, id, cmd)
	return strings.TrimSpace(r.Stdout)
}

// The "done when": a.txt, snapshot, b.txt, rm a.txt, a package
// (a file under /usr, as a package install writes, and a folder of its
// own); restore brings a.txt back and takes the rest away, and says the
// kernels restarted; two forks have the files and are independent; the
// original's removal takes its snapshots off the daemon.
func TestSnapshotRestoreFork(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	images := snapshotImages(t, te)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "snap", Language: "python"})
	te.command(t, info.ID, "echo one > a.txt && mkdir -p sub && echo keep > sub/k.txt")
	// a kernel with state, to see it restarted
	if _, err := te.ExecCode(ctx, te.owner, info.ID, sandbox.CodeRequest{Language: "python", Code: "x = 41"}); err != nil {
		t.Fatal(err)
	}

	s, err := te.Snapshot(ctx, te.owner, info.ID, sandbox.SnapshotRequest{Label: "before"})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(s.ID) || s.Label != "before" || s.SizeBytes <= 0 || s.Created.IsZero() {
		t.Errorf("snapshot = %+v", s)
	}

	te.command(t, info.ID, "echo two > b.txt && rm a.txt && echo changed > sub/k.txt && mkdir -p ro/in && touch ro/in/f && chmod -R a-w ro")
	// a package installed with dpkg: files under /usr, dpkg's database changed
	te.command(t, info.ID, fakePackage+" && dpkg -s sandtray-fake >/dev/null")
	// and rm that removes nothing: restore must not rely on the sandbox's binaries as they are now
	te.command(t, info.ID, "cp /bin/true \"$(command -v rm)\"")

	fwd, err := te.ExposePort(ctx, te.owner, info.ID, 8000, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := te.Restore(ctx, te.owner, info.ID, s.ID)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	// The forward's server (none here) would have ended with the jobs and
	// kernels: the forward ends too (TestRestoreEndsTheForwardsOfItsJobs).
	if list, _ := te.List(ctx); len(list) != 1 || list[0].ID != info.ID || len(list[0].Ports) != 0 {
		t.Errorf("after restore: %+v; want the same sandbox without its port forward", list)
	}
	if !res.KernelsRestarted || res.SandboxID != info.ID || res.Name != "snap" || !slices.Equal(res.PortsClosed, []int{8000}) {
		t.Errorf("restore = %+v; want kernels_restarted, the same id and name, and port 8000's forward closed", res)
	}
	if _, err := te.ExposePort(ctx, te.owner, info.ID, 8000, fwd.HostPort); err != nil {
		t.Fatal(err)
	}
	if got := te.out(t, info.ID, "cat a.txt sub/k.txt; ls b.txt ro /usr/share/sandtray-fake 2>&1 | grep -c 'No such'; dpkg -s sandtray-fake 2>&1 | grep -c 'not installed'"); got != "one\nkeep\n3\n1" {
		t.Errorf("after restore: %q; want a.txt back, sub/k.txt as it was, b.txt and the package gone", got)
	}
	r, err := te.ExecCode(ctx, te.owner, info.ID, sandbox.CodeRequest{Language: "python", Code: "print('x' in globals())"})
	if err != nil || !strings.Contains(r.Result.Stdout, "False") {
		t.Errorf("kernel after restore: %+v %v; want a fresh one", r, err)
	}

	forks, err := te.Fork(ctx, te.owner, info.ID, sandbox.ForkRequest{Count: 2, Name: "branch"})
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	if len(forks) != 2 || forks[0].Name != "branch-1" || forks[1].Name != "branch-2" {
		t.Fatalf("forks = %+v", forks)
	}
	if list, _ := te.List(ctx); len(list) != 3 || len(list[1].Ports)+len(list[2].Ports) != 0 {
		t.Errorf("sandboxes after the fork: %+v; want two forks without the original's port forward", list)
	}
	for _, f := range forks {
		if got := te.out(t, f.SandboxID, "cat a.txt sub/k.txt"); got != "one\nkeep" {
			t.Errorf("fork %s has %q", f.Name, got)
		}
	}
	te.command(t, forks[0].SandboxID, "echo fork1 > a.txt && touch only1")
	if got := te.out(t, forks[1].SandboxID, "cat a.txt; ls only1 2>/dev/null | wc -l"); got != "one\n0" {
		t.Errorf("fork 2 sees fork 1's change: %q", got)
	}
	if got := te.out(t, info.ID, "cat a.txt; ls only1 2>/dev/null | wc -l"); got != "one\n0" {
		t.Errorf("the original sees fork 1's change: %q", got)
	}

	if list, err := te.ListSnapshots(ctx, info.ID); err != nil || len(list) != 1 || list[0].ID != s.ID {
		t.Errorf("list = %+v %v", list, err)
	}
	if list, err := te.ListSnapshots(ctx, forks[0].SandboxID); err != nil || len(list) != 0 {
		t.Errorf("a fork lists its original's snapshots: %+v %v", list, err)
	}

	// Delete the original: its snapshot leaves the daemon, the forks run on.
	if err := te.Delete(ctx, te.owner, info.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the deleted sandbox's snapshot to leave the daemon", func() bool {
		return !slices.ContainsFunc(images(), func(img runtime.LabeledImage) bool { return img.Labels[snapshot.LabelSandbox] == info.ID })
	})
	if got := te.out(t, forks[1].SandboxID, "cat a.txt"); got != "one" {
		t.Errorf("fork after the original's removal: %q", got)
	}
	for _, f := range forks {
		if err := te.Delete(ctx, te.owner, f.SandboxID); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "the forks' image to go with the last fork", func() bool { return len(images()) == 0 })
}

// A label is only a label: whatever it says, the image is named under the
// engine's own repository, and nothing outside it is tagged.
func TestSnapshotNamesStayOurs(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	images := snapshotImages(t, te)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "names"})
	baseID, err := te.docker.ImageID(ctx, te.cfg.DefaultImage)
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"sandtray/sandbox:latest", "docker.io/library/../../x:latest"} { // each snapshot costs a commit
		if _, err := te.Snapshot(ctx, te.owner, info.ID, sandbox.SnapshotRequest{Label: label}); err != nil {
			t.Fatalf("snapshot %q: %v", label, err)
		}
	}
	for _, img := range images() {
		for _, tag := range img.RepoTags {
			if !strings.HasPrefix(tag, snapshot.Repo+te.Engine.cfg().engine[:nameTagLen]+"-") {
				t.Errorf("a snapshot is tagged %s, outside %s", tag, snapshot.Repo)
			}
		}
	}
	for _, bad := range []string{"a\nb", strings.Repeat("x", snapshot.MaxLabel+1)} {
		_, err := te.Snapshot(ctx, te.owner, info.ID, sandbox.SnapshotRequest{Label: bad})
		wantKind(t, err, sandbox.ErrInvalid)
	}
	_, err = te.Snapshot(ctx, te.owner, info.ID, sandbox.SnapshotRequest{Live: true})
	wantKind(t, err, sandbox.ErrInvalid)
	_, err = te.Restore(ctx, te.owner, info.ID, "sandtray/sandbox:latest")
	wantKind(t, err, sandbox.ErrNotFound)
	err = te.DeleteSnapshot(ctx, te.owner, info.ID, "python:3.12")
	wantKind(t, err, sandbox.ErrNotFound)
	if id, err := te.docker.ImageID(ctx, te.cfg.DefaultImage); err != nil || id != baseID {
		t.Errorf("the sandbox image %s is now %s (%v), was %s", te.cfg.DefaultImage, id, err, baseID)
	}
}

// The strict profile keeps the workdir on tmpfs, which a commit does not
// see: snapshot and restore carry it themselves.
func TestSnapshotStrictWorkdir(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.Profile = config.ProfileStrict })
	snapshotImages(t, te)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "strict"})
	te.command(t, info.ID, "echo one > a.txt && mkdir d && echo x > d/x")
	s, err := te.Snapshot(ctx, te.owner, info.ID, sandbox.SnapshotRequest{})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	te.command(t, info.ID, "echo two > b.txt && rm -r a.txt d")
	if _, err := te.Restore(ctx, te.owner, info.ID, s.ID); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := te.out(t, info.ID, "cat a.txt d/x; ls"); got != "one\nx\na.txt\nd" {
		t.Errorf("strict workdir after restore: %q", got)
	}
	forks, err := te.Fork(ctx, te.owner, info.ID, sandbox.ForkRequest{})
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	if got := te.out(t, forks[0].SandboxID, "cat a.txt d/x"); got != "one\nx" {
		t.Errorf("strict fork's workdir: %q", got)
	}
}

// limits.max_snapshots and limits.max_forks bound what a model can pile up.
func TestSnapshotLimits(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.Limits.MaxSnapshots, c.Limits.MaxForks = 1, 1 })
	snapshotImages(t, te)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "limits"})
	if _, err := te.Snapshot(ctx, te.owner, info.ID, sandbox.SnapshotRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := te.Snapshot(ctx, te.owner, info.ID, sandbox.SnapshotRequest{})
	wantKind(t, err, sandbox.ErrConflict)
	if err == nil || !strings.Contains(err.Error(), "delete_snapshot") {
		t.Errorf("error %v does not say what to do", err)
	}
	_, err = te.Fork(ctx, te.owner, info.ID, sandbox.ForkRequest{Count: 2})
	wantKind(t, err, sandbox.ErrInvalid)
	te.SetPaused(true) // the tray's "pause new sandboxes"
	_, err = te.Fork(ctx, te.owner, info.ID, sandbox.ForkRequest{})
	wantKind(t, err, sandbox.ErrPaused)
	te.SetPaused(false)
	if list, _ := te.List(ctx); len(list) != 1 {
		t.Errorf("%d sandboxes after a refused fork", len(list))
	}

	// limits.max_snapshot_mb counts every sandbox's snapshots: one that
	// would take them past it is refused, and none is taken while they
	// fill it.
	tb := newTestEngine(t, func(c *config.Config) { c.Limits.SnapshotMB = 3 })
	snapshotImages(t, tb)
	one := tb.create(t, sandbox.CreateRequest{Name: "one"})
	two := tb.create(t, sandbox.CreateRequest{Name: "two"})
	tb.command(t, one.ID, "head -c 2097152 /dev/urandom > big")
	tb.command(t, two.ID, "head -c 2097152 /dev/urandom > big")
	if _, err := tb.Snapshot(ctx, tb.owner, one.ID, sandbox.SnapshotRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Snapshot(ctx, tb.owner, two.ID, sandbox.SnapshotRequest{})
	wantKind(t, err, sandbox.ErrTooLarge)
	if err == nil || !strings.Contains(err.Error(), "limits.max_snapshot_mb (3 MB") {
		t.Errorf("error %v does not name the budget", err)
	}
	if list, _ := tb.ListSnapshots(ctx, two.ID); len(list) != 0 {
		t.Errorf("the refused snapshot is listed: %+v", list)
	}
	cfg := tb.Config()
	cfg.Limits.SnapshotMB = 1
	if _, err := tb.Reconfigure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Snapshot(ctx, tb.owner, two.ID, sandbox.SnapshotRequest{})
	wantKind(t, err, sandbox.ErrConflict)
	if err == nil || !strings.Contains(err.Error(), "limits.max_snapshot_mb") {
		t.Errorf("error %v does not name the budget", err)
	}
}

// After a restart, a persistent sandbox's snapshots are there to restore;
// those of the ephemeral sandbox reaped at the start-up are gone.
func TestSnapshotsAfterRestart(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: 0} })
	images := snapshotImages(t, te)
	ctx := context.Background()
	keep := te.create(t, sandbox.CreateRequest{Name: "keep", Persistent: true})
	drop := te.create(t, sandbox.CreateRequest{Name: "drop"})
	te.command(t, keep.ID, "echo one > a.txt")
	s, err := te.Snapshot(ctx, te.owner, keep.ID, sandbox.SnapshotRequest{Label: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := te.Snapshot(ctx, te.owner, drop.ID, sandbox.SnapshotRequest{}); err != nil {
		t.Fatal(err)
	}
	te.command(t, keep.ID, "rm a.txt")
	te.stopLoops() // the process dies: nothing is cleaned up

	e2, err := newEngine(ctx, te.cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.stopLoops()
	list, err := e2.ListSnapshots(ctx, "keep")
	if err != nil || len(list) != 1 || list[0].ID != s.ID || list[0].Label != "kept" || list[0].SizeBytes <= 0 {
		t.Fatalf("snapshots after restart: %+v %v", list, err)
	}
	if _, err := e2.Restore(ctx, te.owner, "keep", s.ID); err != nil {
		t.Fatalf("restore after restart: %v", err)
	}
	out, err := e2.ExecCommand(ctx, te.owner, "keep", sandbox.CommandRequest{Command: "cat a.txt"})
	if err != nil || out.Result.Stdout != "one\n" {
		t.Errorf("a.txt after restore: %+v %v", out.Result, err)
	}
	eventually(t, 10*time.Second, "the reaped sandbox's snapshot to leave the daemon", func() bool {
		return !slices.ContainsFunc(images(), func(img runtime.LabeledImage) bool { return img.Labels[snapshot.LabelSandbox] == drop.ID })
	})
}

// An image someone else labels as one of the sandbox's snapshots is
// neither listed nor restored: only what the engine took (its state dir
// holds the record) is.
func TestSnapshotForgedLabelsIgnored(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	snapshotImages(t, te)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "forged"})
	forged := snapshot.Repo + te.Engine.cfg().engine[:nameTagLen] + "-" + sandbox.ShortID(info.ID) + ":0123456789ab"
	if _, err := te.docker.Commit(ctx, info.ID, forged, runtime.ImageConfig{Labels: map[string]string{
		snapshot.LabelEngine: te.Engine.cfg().engine, snapshot.LabelSandbox: info.ID, snapshot.LabelID: "0123456789ab"}}); err != nil {
		t.Fatal(err)
	}
	if list, err := te.ListSnapshots(ctx, info.ID); err != nil || len(list) != 0 {
		t.Errorf("list = %+v, %v; want none", list, err)
	}
	_, err := te.Restore(ctx, te.owner, info.ID, "0123456789ab")
	wantKind(t, err, sandbox.ErrNotFound)
}
