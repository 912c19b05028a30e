package ui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

// find returns the first object of type T that o shows and keep accepts.
func find[T fyne.CanvasObject](t *testing.T, o fyne.CanvasObject, keep func(T) bool) T {
	t.Helper()
	for _, obj := range test.LaidOutObjects(o) {
		if v, ok := obj.(T); ok && keep(v) {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T found", zero)
	return zero
}

func TestCommitDialog(t *testing.T) {
	h := selected(t, alpha)
	test.Tap(h.u.detail.actions.commit)
	dlg := h.overlay()
	image := find(t, dlg, func(*widget.Entry) bool { return true })
	if image.Text != "alpha:latest" {
		t.Errorf("suggested image %q", image.Text)
	}
	bar := find(t, dlg, func(*widget.ProgressBar) bool { return true })

	// A failure is shown in the dialog, which stays open for a retry.
	h.b.err = errBoom
	h.b.progress = []float64{0.25, 0.5}
	image.SetText("mine/alpha:v1")
	test.Tap(find(t, dlg, func(c *widget.Check) bool {
		return c.Text == "Replace the tag if Sandtray committed the image it names"
	}))
	test.Tap(button(t, dlg, "Commit"))
	h.flush()
	problem := find(t, dlg, func(l *widget.Label) bool { return l.Importance == widget.DangerImportance && l.Visible() })
	if want := "Commit failed: docker said no"; problem.Text != want {
		t.Errorf("error %q, want %q", problem.Text, want)
	}
	if h.u.win.Canvas().Overlays().Top() == nil {
		t.Fatal("the dialog closed on failure")
	}
	if bar.Visible() {
		t.Error("the progress bar still shows after the failure")
	}

	// Progress shows while the commit runs; success closes the dialog.
	h.b.err = nil
	test.Tap(button(t, dlg, "Commit"))
	h.mu.Lock()
	queued := len(h.queue)
	h.mu.Unlock()
	if queued != 1 || !bar.Visible() {
		t.Fatalf("commit not started in the background (queued %d, bar visible %t)", queued, bar.Visible())
	}
	h.flush()
	if got := bar.Value; got != 0.5 {
		t.Errorf("progress = %v, want 0.5", got)
	}
	if h.u.win.Canvas().Overlays().Top() != nil {
		t.Error("the dialog stayed open after success")
	}
	want := []string{"Commit(Sandtray app, " + alpha.ID + ", mine/alpha:v1, true)", "Commit(Sandtray app, " + alpha.ID + ", mine/alpha:v1, true)"}
	if diff := cmp.Diff(want, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := h.u.detail.message.label.Text; got != "Committed alpha to mine/alpha:v1 (0123456789ab)." {
		t.Errorf("message = %q", got)
	}
}

func TestCommitNeedsAName(t *testing.T) {
	h := selected(t, alpha)
	test.Tap(h.u.detail.actions.commit)
	dlg := h.overlay()
	find(t, dlg, func(*widget.Entry) bool { return true }).SetText("  ")
	test.Tap(button(t, dlg, "Commit"))
	h.flush()
	if calls := h.b.taken(); len(calls) != 0 {
		t.Errorf("an empty name called %v", calls)
	}
	find(t, dlg, func(l *widget.Label) bool {
		return l.Text == "Type an image name such as myimage:latest." && l.Visible()
	})
}

func TestExportPreviewsThenSaves(t *testing.T) {
	h := selected(t, alpha)
	h.b.export.Dockerfile = "FROM python:3.12-slim\nRUN pip install pandas==2.2.3\n"
	test.Tap(h.u.detail.actions.export)
	h.flush()
	dlg := h.overlay()
	find(t, dlg, func(l *widget.Label) bool { return l.Text == h.b.export.Dockerfile })
	test.Tap(button(t, dlg, "Save to folder…"))
	h.flush()
	want := []string{`ExportDockerfile(Sandtray app, ` + alpha.ID + `, "")`, "SaveDockerfile(" + alpha.ID + ", /home/me/saved)"}
	if diff := cmp.Diff(want, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	find(t, dlg, func(l *widget.Label) bool {
		return l.Text == "Saved the Dockerfile and 1 context files to /home/me/saved." && l.Visible()
	})
}

func TestExportErrorIsShown(t *testing.T) {
	h := selected(t, alpha)
	h.b.err = errBoom
	test.Tap(h.u.detail.actions.export)
	h.flush()
	if got := h.u.detail.message.label.Text; got != "Export alpha: docker said no" {
		t.Errorf("message = %q", got)
	}
	if h.u.win.Canvas().Overlays().Top() != nil {
		t.Error("a dialog opened although the export failed")
	}
}

func TestQuitAsksWhetherToStopEphemeral(t *testing.T) {
	for _, stop := range []bool{true, false} {
		h := newHarness(t)
		h.b.busy = control.Busy{Sessions: 2, Calls: 1}
		h.u.tray.menu.Items[len(h.u.tray.menu.Items)-1].Action()
		h.flush()
		dlg := h.overlay()
		said := false
		for _, o := range test.LaidOutObjects(dlg) {
			if l, ok := o.(*widget.Label); ok && strings.Contains(l.Text, "Now: 2 assistants connected, 1 call running. Quitting ends the calls running") {
				said = true
			}
		}
		if !said {
			t.Error("the quit dialog does not name the assistants and calls running")
		}
		check := find(t, dlg, func(c *widget.Check) bool { return c.Text == "Stop ephemeral sandboxes (persistent ones stay)" })
		if !check.Checked {
			t.Error("stopping ephemeral sandboxes is not the default")
		}
		check.SetChecked(stop)
		test.Tap(button(t, dlg, "Quit"))
		if diff := cmp.Diff([]bool{stop}, h.quits); diff != "" {
			t.Errorf("Quit calls (-want +got):\n%s", diff)
		}
	}
	h := newHarness(t)
	h.u.confirmQuit()
	h.flush()
	test.Tap(button(t, h.overlay(), "Cancel"))
	if len(h.quits) != 0 {
		t.Errorf("cancel quit called Quit(%v)", h.quits)
	}
}

func TestTrayMenu(t *testing.T) {
	h := newHarness(t)
	h.feed(snapshot(alpha, beta, gamma))
	items := map[string]*fyne.MenuItem{}
	for _, item := range h.u.tray.menu.Items {
		items[item.Label] = item
	}
	if items["2 sandboxes running"] == nil {
		t.Errorf("no running count in the tray menu")
	}
	items["Pause new sandboxes"].Action()
	h.flush()
	items["Stop all ephemeral sandboxes"].Action()
	h.flush()
	if diff := cmp.Diff([]string{"SetPaused(true)", "StopEphemeral()"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := h.u.status.message.label.Text; got != "Stopped all ephemeral sandboxes." {
		t.Errorf("status message = %q", got)
	}
	h.b.err = errBoom
	items["Stop all ephemeral sandboxes"].Action()
	h.flush()
	if got := h.u.status.message.label; got.Importance != widget.DangerImportance {
		t.Errorf("failure shown as %q with importance %d", got.Text, got.Importance)
	}
	if len(h.notices) != 1 {
		t.Errorf("failure notified %d times, want once", len(h.notices))
	}
	items["Open Sandtray"].Action()
	if !h.u.win.Content().Visible() {
		t.Error("the window did not show")
	}
}

// Regenerate with: go test ./ui -run Golden -update
var update = flag.Bool("update", false, "rewrite the markup goldens in testdata/")

func assertMarkup(t *testing.T, name string, c fyne.Canvas) {
	t.Helper()
	if *update {
		path := filepath.Join("testdata", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(test.RenderToMarkup(c)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	test.AssertRendersToMarkup(t, name, c)
}

// goldenHarness is a window with three sandboxes, alpha selected, some
// activity, a file tree and a resource history.
func goldenHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.b.logs = activityFixture()
	h.b.listings["."] = []sandbox.FileEntry{{Path: "src", Type: "dir"}, {Path: "notes.txt", Type: "file", Size: 1843}}
	h.b.file = sandbox.FileContent{Data: []byte("remember the milk\n"), Size: 18}
	for i := 4; i >= 0; i-- {
		s := snapshot(alpha, beta, gamma)
		s.Time = t0.Add(-time.Duration(i) * 30 * time.Second)
		s.Sandboxes[0].Stats.CPUPercent = float64(10 + 20*i)
		h.feed(s)
	}
	h.selectRow(h.u.m.indexOf(alpha.ID))
	h.u.win.Resize(fyne.NewSize(1180, 760))
	return h
}

func TestGoldenMainWindow(t *testing.T) {
	h := newHarness(t)
	h.u.win.Resize(fyne.NewSize(1180, 760))
	assertMarkup(t, "empty.xml", h.u.win.Canvas())

	h = goldenHarness(t)
	assertMarkup(t, "activity.xml", h.u.win.Canvas())
	selectTab(h, "Resources")
	assertMarkup(t, "resources.xml", h.u.win.Canvas())
	selectTab(h, "Files")
	h.u.detail.files.tree.Select("notes.txt")
	h.flush()
	assertMarkup(t, "files.xml", h.u.win.Canvas())
	selectTab(h, "Details")
	assertMarkup(t, "details.xml", h.u.win.Canvas())
}

func TestGoldenDialogs(t *testing.T) {
	h := goldenHarness(t)
	test.Tap(h.u.detail.actions.commit)
	assertMarkup(t, "commit.xml", h.u.win.Canvas())
	h.u.win.Canvas().Overlays().Top().Hide()
	h.b.busy = control.Busy{Sessions: 2, Calls: 1}
	h.u.confirmQuit()
	h.flush()
	assertMarkup(t, "quit.xml", h.u.win.Canvas())
}
