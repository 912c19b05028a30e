package ui

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// fakeDiagnoser returns a fixed report, counting its runs.
type fakeDiagnoser struct {
	report string
	ok     bool
	runs   int
}

func (f *fakeDiagnoser) Diagnose(context.Context) (string, bool) {
	f.runs++
	return f.report, f.ok
}

// TestHelpDiagnoseShowsTheDoctorReport: Help → Diagnose runs the checks off
// Fyne's goroutine and shows the report, with a heading that says whether
// something needs fixing.
func TestHelpDiagnoseShowsTheDoctorReport(t *testing.T) {
	d := &fakeDiagnoser{report: "FAIL  docker   no Docker engine answers — fix: start Docker\n", ok: false}
	h := newHarness(t, func(o *Options) { o.Diagnose = d })
	item := menuItem(t, h.u.win.MainMenu(), "Help", "Diagnose…")
	item.Action()
	if d.runs != 0 {
		t.Fatal("the checks ran on Fyne's goroutine; they ask Docker and must run in the background")
	}
	h.flush()
	if d.runs != 1 {
		t.Fatalf("checks ran %d times, want 1", d.runs)
	}
	dlg := h.overlay()
	if got := allText(dlg); !strings.Contains(got, DiagnosisTitle(false)) {
		t.Errorf("dialog heading %q, want %q", got, DiagnosisTitle(false))
	}
	var report string
	for _, o := range test.LaidOutObjects(dlg) {
		if e, ok := o.(*widget.Entry); ok {
			report = e.Text
		}
	}
	if report != d.report {
		t.Errorf("dialog shows %q, want the report %q", report, d.report)
	}
	test.Tap(button(t, dlg, "Copy"))
	if got := h.u.app.Clipboard().Content(); got != d.report {
		t.Errorf("Copy put %q on the clipboard; want the report", got)
	}
}

// TestHelpHasAboutDocsAndLog: Help has About (the version and commit the
// host gave), Documentation (the README, copied where no browser opens),
// and Open log… (the log's end, from a whole line); without a Diagnoser,
// no Diagnose.
func TestHelpHasAboutDocsAndLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(log, []byte("level=INFO msg=\"sandtray engine ready\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) { o.About, o.LogPath = "Sandtray 0.1.0 (commit 0123456789ab)", log })
	menuItem(t, h.u.win.MainMenu(), "Help", "About Sandtray").Action()
	if got := allText(h.overlay()); !strings.Contains(got, "Sandtray 0.1.0 (commit 0123456789ab)") || !strings.Contains(got, DocsURL) {
		t.Errorf("About says %q", got)
	}
	var opened string
	h.u.openURL = func(u *url.URL) error { opened = u.String(); return nil }
	menuItem(t, h.u.win.MainMenu(), "Help", "Documentation").Action()
	if opened != DocsURL {
		t.Errorf("Documentation opened %q", opened)
	}
	menuItem(t, h.u.win.MainMenu(), "Help", "Open log…")
	for _, m := range h.u.win.MainMenu().Items {
		for _, it := range m.Items {
			if it.Label == "Diagnose…" {
				t.Error("Diagnose… without a Diagnoser")
			}
		}
	}
	if got := LogTail([]byte("one\ntwo\nthree\n"), 9); got != "three\n" {
		t.Errorf("LogTail = %q; want the last whole line", got)
	}
}

func menuItem(t *testing.T, mm *fyne.MainMenu, menu, label string) *fyne.MenuItem {
	t.Helper()
	for _, m := range mm.Items {
		if m.Label != menu {
			continue
		}
		for _, it := range m.Items {
			if it.Label == label {
				return it
			}
		}
	}
	t.Fatalf("no %s → %s in the menu bar", menu, label)
	return nil
}
