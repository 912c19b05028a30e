package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
)

// t0 is the time of the fake's one activity entry.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 123456789, time.UTC)

// fakeGUI is the engine's side of the window's protocol, in memory: each
// method records what it was asked and answers something of its own.
type fakeGUI struct {
	fakeEngine
	mu    sync.Mutex
	calls []string
}

func (f *fakeGUI) rec(format string, args ...any) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

func (f *fakeGUI) Logs(_ context.Context, ref string, tail int) ([]sandbox.Activity, error) {
	f.rec("Logs %s %d", ref, tail)
	return []sandbox.Activity{{Time: t0, Tool: "execute_command", Input: "echo hi", Stdout: "hi\n"}}, nil
}

func (f *fakeGUI) ListFiles(_ context.Context, o sandbox.Owner, ref, path string, depth int, all bool) (sandbox.Listing, error) {
	f.rec("ListFiles %s %s %s %d %t", o.Client, ref, path, depth, all)
	return sandbox.Listing{Path: "/workspace/" + path}, nil
}

func (f *fakeGUI) ReadFile(_ context.Context, o sandbox.Owner, ref, path string, off, limit int64) (sandbox.FileContent, error) {
	f.rec("ReadFile %s %s %s %d %d", o.Client, ref, path, off, limit)
	return sandbox.FileContent{Data: []byte("print(1)\n")}, nil
}

func (f *fakeGUI) SaveFiles(_ context.Context, ref, path, host string) (sandbox.CopyResult, error) {
	f.rec("SaveFiles %s %s %s", ref, path, host)
	return sandbox.CopyResult{Files: 2}, nil
}

func (f *fakeGUI) Stop(_ context.Context, o sandbox.Owner, ref string) (sandbox.Info, error) {
	f.rec("Stop %s %s", o.Client, ref)
	return sandbox.Info{Name: ref, Status: sandbox.StatusStopped}, nil
}

func (f *fakeGUI) Kill(_ context.Context, ref string) error {
	f.rec("Kill %s", ref)
	return fmt.Errorf("no sandbox %q: %w", ref, sandbox.ErrNotFound)
}

func (f *fakeGUI) Delete(_ context.Context, o sandbox.Owner, ref string) error {
	f.rec("Delete %s %s", o.Client, ref)
	return nil
}

func (f *fakeGUI) SetPersistent(_ context.Context, o sandbox.Owner, ref string, p bool) (sandbox.Info, error) {
	f.rec("SetPersistent %s %s %t", o.Client, ref, p)
	return sandbox.Info{Persistent: p}, nil
}

func (f *fakeGUI) Commit(_ context.Context, o sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	f.rec("Commit %s %s %s", o.Client, ref, req.Image)
	progress(1, 2, "layer 1")
	return sandbox.CommitResult{Image: req.Image}, nil
}

func (f *fakeGUI) ExportDockerfile(_ context.Context, o sandbox.Owner, ref, host string) (sandbox.Export, error) {
	f.rec("ExportDockerfile %s %s %q", o.Client, ref, host)
	return sandbox.Export{Dockerfile: "FROM x"}, nil
}

func (f *fakeGUI) SaveDockerfile(_ context.Context, ref, dir string) (sandbox.Export, error) {
	f.rec("SaveDockerfile %s %s", ref, dir)
	return sandbox.Export{Dir: dir}, nil
}

func (f *fakeGUI) SetPaused(p bool) { f.rec("SetPaused %t", p) }

func (f *fakeGUI) StopEphemeral(context.Context) error { f.rec("StopEphemeral"); return nil }

func (f *fakeGUI) Jobs(id string) []sandbox.JobInfo {
	f.rec("Jobs %s", id)
	return []sandbox.JobInfo{{Command: "sleep 9"}}
}

func (f *fakeGUI) JobStatus(_ context.Context, id string, since int64) (sandbox.JobStatus, error) {
	f.rec("JobStatus %s %d", id, since)
	return sandbox.JobStatus{ID: id, Output: "out"}, nil
}

func (f *fakeGUI) JobStop(_ context.Context, id string) (sandbox.JobStatus, error) {
	f.rec("JobStop %s", id)
	return sandbox.JobStatus{ID: id, Status: sandbox.JobStopped}, nil
}

func (f *fakeGUI) ShowStats(ids []string) { f.rec("ShowStats %v", ids) }
func (f *fakeGUI) FollowStats(id string)  { f.rec("FollowStats %s", id) }

func (f *fakeGUI) GPUStatus(context.Context) sandbox.GPUStatus {
	f.rec("GPUStatus")
	return sandbox.GPUStatus{Detail: "none"}
}

func (f *fakeGUI) Snapshot(_ context.Context, o sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error) {
	f.rec("Snapshot %s %s %s", o.Client, ref, req.Label)
	return sandbox.SnapshotInfo{ID: "snap1", Label: req.Label}, nil
}

func (f *fakeGUI) ListSnapshots(_ context.Context, ref string) ([]sandbox.SnapshotInfo, error) {
	f.rec("ListSnapshots %s", ref)
	return []sandbox.SnapshotInfo{{ID: "snap1"}}, nil
}

func (f *fakeGUI) DeleteSnapshot(_ context.Context, o sandbox.Owner, ref, id string) error {
	f.rec("DeleteSnapshot %s %s %s", o.Client, ref, id)
	return nil
}

func (f *fakeGUI) Restore(_ context.Context, o sandbox.Owner, ref, id string) (sandbox.RestoreResult, error) {
	f.rec("Restore %s %s %s", o.Client, ref, id)
	return sandbox.RestoreResult{}, nil
}

func (f *fakeGUI) Fork(_ context.Context, o sandbox.Owner, ref string, req sandbox.ForkRequest) ([]sandbox.Fork, error) {
	f.rec("Fork %s %s %d", o.Client, ref, req.Count)
	return []sandbox.Fork{{}}, nil
}

func (f *fakeGUI) RemoveEgressRule(_ context.Context, ref, pattern string) error {
	f.rec("RemoveEgressRule %s %s", ref, pattern)
	return nil
}

func (f *fakeGUI) RemoveEgressApproval(_ context.Context, pattern string) error {
	f.rec("RemoveEgressApproval %s", pattern)
	return nil
}

func (f *fakeGUI) ImageState(_ context.Context, ref string) (ImageState, error) {
	f.rec("ImageState %s", ref)
	return ImageState{Ref: "sandtray/sandbox:latest", Buildable: true, Build: &ImageProgress{Step: "Downloading"}}, nil
}

func (f *fakeGUI) BuildImage(_ context.Context, progress func(ImageProgress)) error {
	f.rec("BuildImage")
	progress(ImageProgress{Step: "Unpacking", Done: 3, Total: 9})
	return nil
}

func (f *fakeGUI) ApplySettings(context.Context) ([]string, error) {
	f.rec("ApplySettings")
	return []string{"http.listen"}, nil
}

func (f *fakeGUI) Busy() Busy { f.rec("Busy"); return Busy{Sessions: 2, Calls: 1} }

// TestGUIProtocol: every method of the window's table, called through the
// typed client over an in-memory pipe, reaches the engine with its
// arguments and brings its answer back (progress events too, and an
// error's kind); no method of the table is left uncalled.
func TestGUIProtocol(t *testing.T) {
	f := &fakeGUI{fakeEngine: fakeEngine{snaps: make(chan sandbox.Snapshot, 1)}}
	srv := NewServer(f, nil)
	srv.HandleGUI(f)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g := NewGUIClient(ctx, srv.Pipe(ctx))
	me := sandbox.Owner{Client: "Sandtray app"}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	acts, err := g.Logs(ctx, "sb", LogsQuery{Tail: 500, Keep: 2})
	must("Logs", err)
	if len(acts) != 1 || acts[0].Stdout != "i\n" || acts[0].StdoutBytes != 3 || !acts[0].Cut() {
		t.Errorf("Logs = %+v; want the output's last 2 bytes of 3", acts)
	}
	if acts, err := g.Logs(ctx, "sb", LogsQuery{After: t0}); err != nil || len(acts) != 0 {
		t.Errorf("Logs after the newest entry = %+v, %v; want none", acts, err)
	}
	whole, err := g.ActivityEntry(ctx, "sb", t0)
	must("ActivityEntry", err)
	if whole.Stdout != "hi\n" {
		t.Errorf("ActivityEntry = %+v; want the whole output", whole)
	}
	_, err = g.ListFiles(ctx, me, "sb", "src", 2, true)
	must("ListFiles", err)
	fc, err := g.ReadFile(ctx, me, "sb", "a.py", 4, 100)
	must("ReadFile", err)
	_, err = g.SaveFiles(ctx, "sb", "out", "/home/me/out")
	must("SaveFiles", err)
	info, err := g.Stop(ctx, me, "sb")
	must("Stop", err)
	if err := g.Kill(ctx, "gone"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Kill of a missing sandbox: %v, want not found", err)
	}
	must("Delete", g.Delete(ctx, me, "sb"))
	_, err = g.SetPersistent(ctx, me, "sb", true)
	must("SetPersistent", err)
	var steps []string
	res, err := g.Commit(ctx, me, "sb", sandbox.CommitRequest{Image: "mine:1"}, func(cur, total float64, msg string) {
		steps = append(steps, fmt.Sprintf("%g/%g %s", cur, total, msg))
	})
	must("Commit", err)
	if res.Image != "mine:1" || fmt.Sprint(steps) != "[1/2 layer 1]" {
		t.Errorf("Commit = %+v, progress %q", res, steps)
	}
	_, err = g.ExportDockerfile(ctx, me, "sb", "")
	must("ExportDockerfile", err)
	_, err = g.SaveDockerfile(ctx, "sb", "/home/me/df")
	must("SaveDockerfile", err)
	must("StopEphemeral", g.StopEphemeral(ctx))
	if jobs := g.Jobs("sb"); len(jobs) != 1 {
		t.Errorf("Jobs = %+v", jobs)
	}
	st, err := g.JobStatus(ctx, "job-1", 42)
	must("JobStatus", err)
	_, err = g.JobStop(ctx, "job-1")
	must("JobStop", err)
	if gpu := g.GPUStatus(ctx); gpu.Detail != "none" {
		t.Errorf("GPUStatus = %+v", gpu)
	}
	_, err = g.Snapshot(ctx, me, "sb", sandbox.SnapshotRequest{Label: "before"})
	must("Snapshot", err)
	_, err = g.ListSnapshots(ctx, "sb")
	must("ListSnapshots", err)
	must("DeleteSnapshot", g.DeleteSnapshot(ctx, me, "sb", "snap1"))
	_, err = g.Restore(ctx, me, "sb", "snap1")
	must("Restore", err)
	_, err = g.Fork(ctx, me, "sb", sandbox.ForkRequest{Count: 2})
	must("Fork", err)
	must("RemoveEgressRule", g.RemoveEgressRule(ctx, "sb", "pypi.org"))
	must("RemoveEgressApproval", g.RemoveEgressApproval(ctx, "*.npmjs.org"))
	img, err := g.ImageState(ctx, "")
	must("ImageState", err)
	var built []ImageProgress
	must("BuildImage", g.BuildImage(ctx, func(p ImageProgress) { built = append(built, p) }))
	restart, err := g.ApplySettings(ctx)
	must("ApplySettings", err)
	if b := g.Busy(); b.String() != "2 assistants connected, 1 call running" {
		t.Errorf("Busy = %q", b)
	}
	if string(fc.Data) != "print(1)\n" || info.Status != sandbox.StatusStopped || st.Output != "out" ||
		img.Build == nil || img.Build.Step != "Downloading" || len(built) != 1 || built[0].Total != 9 || fmt.Sprint(restart) != "[http.listen]" {
		t.Errorf("answers: %+v %+v %+v %+v %+v %v", fc, info, st, img, built, restart)
	}
	// The hints go in order, without an answer.
	g.SetPaused(true)
	g.ShowStats([]string{"a", "b"})
	g.FollowStats("a")
	want := []string{"SetPaused true", "ShowStats [a b]", "FollowStats a"}
	testwait.Eventually(t, 10*time.Second, "the hints, in order", func() bool { return f.saw(want...) })
	// The watch stream, with what the Snapshots tab follows.
	f.snaps <- sandbox.Snapshot{Sessions: 3, Sandboxes: []sandbox.Info{{ID: "sb", SnapshotsChanged: 7}}}
	snap, err := g.Watch(ctx).Next(ctx)
	if err != nil || snap.Sessions != 3 || len(snap.Sandboxes) != 1 || snap.Sandboxes[0].SnapshotsChanged != 7 {
		t.Errorf("Watch: %+v %v; want 3 sessions and sb's snapshots changed 7 times", snap, err)
	}
	f.mu.Lock()
	calls := strings.Join(f.calls, "\n")
	f.mu.Unlock()
	for _, line := range []string{"ListFiles Sandtray app sb src 2 true", "ReadFile Sandtray app sb a.py 4 100",
		"SaveFiles sb out /home/me/out", "Commit Sandtray app sb mine:1", "JobStatus job-1 42", "Fork Sandtray app sb 2",
		"RemoveEgressApproval *.npmjs.org", "ImageState "} {
		if !strings.Contains(calls, line) {
			t.Errorf("the engine was not asked %q; it was asked:\n%s", line, calls)
		}
	}
	// Every method of the table was called (the egress commands' own are
	// TestControlCalls').
	for _, m := range guiMethods(f) {
		if m.name == MethodGUIWatch {
			continue
		}
		name := methodCallName(m.name)
		if !strings.Contains(calls, name) {
			t.Errorf("method %s (%s) untested", m.name, name)
		}
	}
}

// saw reports whether the calls so far include want, in order.
func (f *fakeGUI) saw(want ...string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := 0
	for _, c := range f.calls {
		if i < len(want) && c == want[i] {
			i++
		}
	}
	return i == len(want)
}

// methodCallName is the fake's record name of a wire method:
// "gui.list_files" is ListFiles.
func methodCallName(wire string) string {
	name := wire[strings.IndexByte(wire, '.')+1:]
	special := map[string]string{"export_dockerfile": "ExportDockerfile", "activity_entry": "Logs sb 0", "image_build": "BuildImage", "apply": "ApplySettings",
		"remove_egress_rule": "RemoveEgressRule", "remove_egress_approval": "RemoveEgressApproval"}
	if s, ok := special[name]; ok {
		return s
	}
	parts := strings.Split(name, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	out := strings.Join(parts, "")
	if slices.Contains([]string{"GpuStatus"}, out) {
		return "GPUStatus"
	}
	return out
}
