package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// TestQuitAttachedLeavesTheEngine: in a window on an engine another
// process runs, Quit says the engine and its sandboxes carry on, offers no
// choice to stop sandboxes, and quits without stopping any.
func TestQuitAttachedLeavesTheEngine(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Attached = true })
	h.u.confirmQuit()
	h.flush()
	said := false
	for _, o := range test.LaidOutObjects(h.overlay()) {
		switch o := o.(type) {
		case *widget.Check:
			t.Errorf("a check box %q in the attached app's quit dialog", o.Text)
		case *widget.Label:
			said = said || strings.Contains(o.Text, "keeps running")
		}
	}
	if !said {
		t.Error("the quit dialog does not say the engine keeps running")
	}
	test.Tap(button(t, h.overlay(), "Quit"))
	if len(h.quits) != 1 || h.quits[0] {
		t.Errorf("quits %v, want one that stops nothing", h.quits)
	}
}
