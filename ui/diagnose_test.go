package ui

import (
	"context"
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
}

func TestNoDiagnoserNoHelpMenu(t *testing.T) {
	h := newHarness(t)
	for _, m := range h.u.win.MainMenu().Items {
		if m.Label == "Help" {
			t.Error("a Help menu without a Diagnoser")
		}
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
