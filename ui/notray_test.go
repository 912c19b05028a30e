package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestNoTrayNoticeInAnAttachedWindow: a window on an engine an assistant
// started says that quitting leaves that engine running.
func TestNoTrayNoticeInAnAttachedWindow(t *testing.T) {
	why := "no tray (StatusNotifier) host answers on this desktop"
	h := newHarness(t, func(o *Options) { o.NoTray, o.NoNotifications, o.Attached = why, true, true })
	notice := find(t, h.u.noTray, func(l *widget.Label) bool { return strings.HasPrefix(l.Text, "No tray icon") })
	if !strings.Contains(notice.Text, "keeps running") || strings.Contains(notice.Text, "ends it") {
		t.Errorf("an attached window's notice %q; want it to say the engine keeps running", notice.Text)
	}
}

// TestNoTraySaysSoOnceAndKeepsTheWindow: without a tray host the window
// says why, once (Got it is remembered); closing the window does not hide
// it with no way back: it minimises, or, where it cannot, asks whether to
// quit; and without a notification service, notices go to the status line.
func TestNoTraySaysSoOnceAndKeepsTheWindow(t *testing.T) {
	why := "no tray (StatusNotifier) host answers on this desktop"
	h := newHarness(t, func(o *Options) { o.NoTray, o.NoNotifications = why, true })
	if h.u.noTray == nil || !h.u.noTray.Visible() {
		t.Fatal("no notice without a tray")
	}
	notice := find(t, h.u.noTray, func(l *widget.Label) bool { return strings.HasPrefix(l.Text, "No tray icon") })
	if want := NoTrayText(why, false); notice.Text != want || !strings.Contains(want, "closing the window minimises it") {
		t.Errorf("notice %q", notice.Text)
	}
	test.Tap(button(t, h.u.noTray, "Got it"))
	if h.u.noTray.Visible() {
		t.Error("Got it left the notice")
	}
	again := New(h.u.app, h.b, Options{NoTray: why, Quit: func(bool) {}})
	defer again.win.Close()
	if again.noTray != nil {
		t.Error("the notice came back after Got it")
	}

	h.u.closeWithoutTray() // the test driver's window cannot be minimised
	h.flush()
	dlg := h.overlay()
	button(t, dlg, "Quit")
	if !h.u.win.Content().Visible() {
		t.Error("closing hid the window with no tray to bring it back")
	}

	s := snapshot(alpha)
	s.Notices = []sandbox.Notice{{Seq: 1, Title: "Sandbox alpha was killed", Body: "it ran out of memory"}}
	h.feed(s)
	if len(h.notices) != 0 || h.u.status.message.label.Text != "Sandbox alpha was killed: it ran out of memory" {
		t.Errorf("without a notification service: notified %v, status %q", h.notices, h.u.status.message.label.Text)
	}
}

// TestWithATrayThereIsNoNotice: a desktop with a tray gets no notice.
func TestWithATrayThereIsNoNotice(t *testing.T) {
	h := newHarness(t)
	if h.u.noTray != nil {
		t.Error("a notice on a desktop with a tray")
	}
}
