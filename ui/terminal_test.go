package ui

import (
	"context"
	"errors"
	"fyne.io/fyne/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// fakeTerminal records what it was asked to run.
type fakeTerminal struct {
	opened [][]string
	err    error
}

func (f *fakeTerminal) Open(argv []string) error {
	f.opened = append(f.opened, argv)
	return f.err
}

func terminalHarness(t *testing.T, term *fakeTerminal, info sandbox.Info) *harness {
	h := newHarness(t, func(o *Options) {
		if term != nil {
			o.Terminal = term
		}
	})
	s := snapshot(alpha, beta, info)
	s.Docker = sandbox.DockerStatus{Connected: true, Host: "unix:///run/user/1000/docker.sock"}
	h.feed(s)
	h.selectRow(h.u.m.indexOf(info.ID))
	return h
}

func TestTerminalOpensAShellAsTheSandboxUser(t *testing.T) {
	term := &fakeTerminal{}
	nonroot := box("dddd", "delta", sandbox.StatusRunning, false, "Cursor", time.Minute)
	nonroot.Spec.User, nonroot.Spec.Workdir = "1000:1000", "/home/dev"
	h := terminalHarness(t, term, nonroot)
	test.Tap(h.u.detail.actions.term)
	h.flush()
	want := [][]string{{"docker", "-H", "unix:///run/user/1000/docker.sock", "exec", "-it", "-u", "1000:1000", "-w", "/home/dev",
		ShortID(nonroot.ID), "sh", "-c", "command -v bash >/dev/null && exec bash; exec sh"}}
	if diff := cmp.Diff(want, term.opened); diff != "" {
		t.Errorf("terminal ran (-want +got):\n%s", diff)
	}
	if got := h.u.detail.message.label.Text; got != "Opened a terminal in delta." {
		t.Errorf("message = %q", got)
	}
}

func TestTerminalFallsBackToCopying(t *testing.T) {
	for name, term := range map[string]*fakeTerminal{
		"no terminal found": {err: errors.New("no terminal emulator found; set $TERMINAL")},
		"no Terminal seam":  nil,
	} {
		t.Run(name, func(t *testing.T) {
			h := terminalHarness(t, term, alpha)
			test.Tap(h.u.detail.actions.term)
			h.flush()
			cmd := ExecCommand(alpha, "unix:///run/user/1000/docker.sock")
			if got := h.u.app.Clipboard().Content(); got != cmd {
				t.Errorf("clipboard = %q, want %q", got, cmd)
			}
			msg := h.u.detail.message.label.Text
			if !strings.Contains(msg, "Copied “"+cmd+"”") || (term != nil) != strings.Contains(msg, "set $TERMINAL") {
				t.Errorf("message = %q", msg)
			}
		})
	}
}

func TestTerminalOnlyForRunningSandboxes(t *testing.T) {
	h := terminalHarness(t, &fakeTerminal{}, beta) // stopped
	if !h.u.detail.actions.term.Disabled() {
		t.Error("Terminal is enabled on a stopped sandbox")
	}
}

// fakeAutostart is an in-memory login item.
type fakeAutostart struct {
	on  bool
	err error
}

func (f *fakeAutostart) Enabled() (bool, error) { return f.on, nil }

func (f *fakeAutostart) SetEnabled(on bool) error {
	if f.err != nil {
		return f.err
	}
	f.on = on
	return nil
}

func TestTrayStartAtLogin(t *testing.T) {
	auto := &fakeAutostart{on: true}
	h := newHarness(t, func(o *Options) { o.Autostart = auto })
	item := h.u.tray.login.item
	if !item.Checked || item.Label != "Start at login" {
		t.Fatalf("item = %q checked %v, want the enabled state", item.Label, item.Checked)
	}
	if !slices.Contains(h.u.tray.menu.Items, item) {
		t.Fatal("Start at login is not in the tray menu")
	}
	item.Action()
	h.flush()
	if auto.on || item.Checked {
		t.Errorf("after unchecking: autostart %v, item checked %v", auto.on, item.Checked)
	}
	auto.err = errors.New("read-only home")
	item.Action()
	h.flush()
	if auto.on || item.Checked {
		t.Error("a failed enable shows as checked")
	}
	if len(h.notices) != 1 || !strings.Contains(h.notices[0], "read-only home") {
		t.Errorf("notices = %v, want the failure", h.notices)
	}
}

func TestTrayMenuItems(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Autostart, o.Clients, o.Settings = &fakeAutostart{}, tempClients{home: t.TempDir(), shim: "/s"}, newFakeSettings()
	})
	var labels []string
	for _, it := range h.u.tray.menu.Items {
		labels = append(labels, it.Label)
	}
	want := []string{"No sandboxes running", "", "Open Sandtray", "Background jobs…", "Stop all ephemeral sandboxes", "Pause new sandboxes", "",
		"Connect assistants…", "Settings…", "Start at login", "", "Quit Sandtray…"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("tray menu (-want +got):\n%s", diff)
	}
	for _, it := range h.u.tray.menu.Items {
		if it.Label == "Settings…" {
			it.Action()
		}
	}
	if h.u.settings == nil {
		t.Error("Settings… opened no window")
	}
}

func TestWindowMenuHasTheDesktopItems(t *testing.T) {
	auto := &fakeAutostart{}
	h := newHarness(t, func(o *Options) {
		o.Autostart, o.Clients, o.Settings = auto, tempClients{home: t.TempDir(), shim: "/s"}, newFakeSettings()
	})
	menu := h.u.win.MainMenu().Items[0]
	var labels []string
	for _, it := range menu.Items {
		labels = append(labels, it.Label)
	}
	want := []string{"Background jobs…", "Stop all ephemeral sandboxes", "Pause new sandboxes", "", "Connect assistants…", "Settings…",
		"Start at login", "", "Quit Sandtray…"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("Sandtray menu (-want +got):\n%s", diff)
	}
	menu.Items[6].Action()
	h.flush()
	if !auto.on || !menu.Items[6].Checked {
		t.Errorf("Start at login from the window menu: autostart %v, checked %v", auto.on, menu.Items[6].Checked)
	}
	menu.Items[8].Action() // Quit asks first
	h.flush()
	if h.u.win.Canvas().Overlays().Top() == nil || len(h.quits) != 0 {
		t.Error("Quit from the window menu did not ask first")
	}
}

// TestWindowMenuReachesWhatTheTrayDoes: without a tray (a bare X server,
// GNOME without the AppIndicator extension), the window's menu stops every
// ephemeral sandbox and pauses new ones, and its check mark follows the
// engine's pause as the tray's does.
func TestWindowMenuReachesWhatTheTrayDoes(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.NoTray = "no StatusNotifier host" })
	items := map[string]*fyne.MenuItem{}
	for _, it := range h.u.win.MainMenu().Items[0].Items {
		items[it.Label] = it
	}
	items["Stop all ephemeral sandboxes"].Action()
	h.flush()
	items["Pause new sandboxes"].Action()
	h.flush()
	if diff := cmp.Diff([]string{"StopEphemeral()", "SetPaused(true)"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if !items["Pause new sandboxes"].Checked {
		t.Error("Pause new sandboxes is not checked after pausing")
	}
	s := snapshot(alpha)
	s.Paused = false
	h.feed(s) // the engine resumed them (the tray, another window)
	if items["Pause new sandboxes"].Checked {
		t.Error("the window's Pause check does not follow the engine")
	}
}

// TestStartAtLoginFollowsTheFile: the check mark follows the autostart
// entry when it changes outside the app (`sandtray autostart disable`),
// read again every autostartPoll while the app runs.
func TestStartAtLoginFollowsTheFile(t *testing.T) {
	auto := &fakeAutostart{on: true}
	h := newHarness(t, func(o *Options) { o.Autostart = auto })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.u.tray.login.watch(ctx)
	h.flush()
	if !h.u.tray.login.item.Checked {
		t.Fatal("the check mark does not show the enabled entry")
	}
	auto.on = false // the command line removed it
	h.fire(autostartPoll)
	if h.u.tray.login.item.Checked {
		t.Error("the check mark stayed after the entry went")
	}
	cancel()
	h.fire(autostartPoll)
	if n := len(h.timers); n != 0 {
		t.Errorf("%d reads still scheduled after the app stopped", n)
	}
}
