package ui

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// logBuffer is a log the test reads, safe for the UI's goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func withLog(l *logBuffer) func(*Options) {
	return func(o *Options) { o.Log = slog.New(slog.NewTextHandler(l, nil)) }
}

// TestAPanicInTheWindowKeepsTheAppRunning: a panic in a button's click,
// in a list row the window redraws, in a task on Fyne's goroutine and in
// work off it is recovered: the log has it with its stack, the window
// says so in one line, and the window goes on working (the next click
// does what it should).
func TestAPanicInTheWindowKeepsTheAppRunning(t *testing.T) {
	var log logBuffer
	h := newHarness(t, withLog(&log))
	h.feed(snapshot(alpha, beta))
	h.selectRow(0)
	before := panicked.Load()

	kill := button(t, h.u.win.Content(), "Kill")
	kill.OnTapped = func() { panic("a bug in Kill") } // as if the click's code had one
	h.u.guardAll()
	test.Tap(kill)
	h.flush()
	if got := h.u.status.message.label.Text; !strings.Contains(got, "The window hit a bug") || !strings.Contains(got, "a bug in Kill") {
		t.Errorf("the window says %q; want the bug named in one line", got)
	}
	if s := log.String(); !strings.Contains(s, "a bug in Kill") || !strings.Contains(s, "guard_test.go") {
		t.Errorf("the log has no panic with its stack:\n%s", s)
	}

	h.u.list.list.UpdateItem = func(widget.ListItemID, fyne.CanvasObject) { panic("a bug in a row") }
	h.u.guardAll()
	h.u.list.list.Refresh()
	test.WidgetRenderer(h.u.list.list).Layout(fyne.NewSize(900, 400))
	h.u.do(func() { panic("a bug in a task") })
	h.u.goSafe("work", func() { panic("a bug off the UI thread") })
	h.flush()
	if n := panicked.Load() - before; n < 4 {
		t.Errorf("%d panics recovered; want the click's, the row's, the task's and the work's", n)
	}
	for _, want := range []string{"a bug in a row", "a bug in a task", "a bug off the UI thread"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	// The window still works: selecting another sandbox shows it.
	h.selectRow(1)
	if info, ok := h.u.m.current(); !ok || info.Name != "beta" || h.u.detail.title.Text != "beta" {
		t.Errorf("after the panics, selecting beta shows %q", h.u.detail.title.Text)
	}
}

// TestEveryCallbackIsGuarded walks every window, dialog and menu the app
// shows, as Fyne lays them out, after opening each of them: every
// function a widget calls back (a click, a list's rows, a menu item) must
// be guarded, so no panic in one reaches Fyne's event loop and takes the
// engine down.
func TestEveryCallbackIsGuarded(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Settings = newFakeSettings()
		o.Clients = tempClients{home: t.TempDir(), shim: "/opt/sandtray/sandtray-mcp"}
		o.Images = &fakeImages{st: ImageState{Ref: "sandtray/sandbox:latest", Buildable: true, Present: true}}
		o.Autostart = &fakeAutostart{}
		o.Diagnose = &fakeDiagnoser{}
		o.LogPath = "/dev/null"
	})
	h.b.logs = activityFixture()
	h.b.jobs = []sandbox.JobInfo{{JobStatus: sandbox.JobStatus{ID: "job-1", SandboxID: alpha.ID, Status: sandbox.JobRunning}, Command: "sleep 60"}}
	h.feed(snapshot(alpha, beta, gamma))
	h.selectRow(0)
	var bad []string
	check := func(state string) {
		t.Helper()
		h.flush()
		for _, w := range h.u.app.Driver().AllWindows() {
			w.Resize(fyne.NewSize(1100, 760))
			objs := test.LaidOutObjects(w.Content())
			for _, o := range w.Canvas().Overlays().List() {
				objs = append(objs, test.LaidOutObjects(o)...)
			}
			for _, o := range objs {
				bad = append(bad, unguarded(o, state)...)
			}
			if m := w.MainMenu(); m != nil {
				for _, menu := range m.Items {
					bad = append(bad, unguardedMenu(menu, state)...)
				}
			}
		}
		bad = append(bad, unguardedMenu(h.u.tray.menu, state)...)
	}
	check("the main window")
	for _, tab := range h.u.detail.tabs.Items {
		h.u.detail.tabs.Select(tab)
		check("the " + tab.Text + " tab")
	}
	for _, open := range []struct {
		what string
		do   func()
	}{
		{"the quit dialog", h.u.confirmQuit},
		{"the delete dialog", func() { test.Tap(button(t, h.u.win.Content(), "Delete…")) }},
		{"the commit dialog", func() { h.u.showCommitDialog(alpha) }},
		{"the export dialog", func() { h.u.showExportDialog(alpha, sandbox.Export{Dockerfile: "FROM x"}) }},
		{"the Clients window", h.u.showClients},
		{"the Settings window", h.u.showSettings},
		{"the Jobs window", h.u.showAllJobs},
	} {
		open.do()
		check(open.what)
		for h.u.win.Canvas().Overlays().Top() != nil {
			h.u.win.Canvas().Overlays().Remove(h.u.win.Canvas().Overlays().Top())
		}
	}
	seen := map[string]bool{}
	for _, b := range bad {
		if !seen[b] {
			seen[b] = true
			t.Error(b)
		}
	}
}

// unguarded lists o's callbacks that are not guarded: every exported
// function field that runs the UI's code, directly or through a dialog's
// buttons (Fyne's own plumbing, such as the tabs' overflow button, calls
// no code of the UI's but through the fields checked here).
func unguarded(o fyne.CanvasObject, state string) []string {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	t := v.Elem().Type()
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		fv := v.Elem().Field(i)
		if !f.IsExported() || fv.Kind() != reflect.Func || fv.IsNil() || isGuarded(fv) {
			continue
		}
		fn := runtime.FuncForPC(fv.Pointer()).Name()
		if strings.HasPrefix(fn, "github.com/sandtray/sandtray/ui.") || strings.HasPrefix(fn, "fyne.io/fyne/v2/dialog.") {
			out = append(out, fmt.Sprintf("in %s: %s.%s (%s) is not guarded", state, t, f.Name, fn))
		}
	}
	return out
}

func unguardedMenu(m *fyne.Menu, state string) []string {
	var out []string
	for _, item := range m.Items {
		if item.Action != nil && !isGuarded(reflect.ValueOf(item.Action)) {
			out = append(out, fmt.Sprintf("in %s: menu item %q is not guarded", state, item.Label))
		}
		if item.ChildMenu != nil {
			out = append(out, unguardedMenu(item.ChildMenu, state)...)
		}
	}
	return out
}

// TestWatchdogLogsAStuckUIThread: a UI thread that does not take the
// watchdog's task for more than stuckAfter is logged once with its stack,
// and again when it answers.
func TestWatchdogLogsAStuckUIThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log logBuffer
		var mu sync.Mutex
		var held []func()
		u := &UI{log: slog.New(slog.NewTextHandler(&log, nil)), queue: func(f func()) {
			mu.Lock()
			held = append(held, f) // the thread is stuck: nothing queued runs
			mu.Unlock()
		}}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go u.watchdog(ctx)
		time.Sleep(stuckAfter)
		synctest.Wait()
		if strings.Contains(log.String(), "has not answered") {
			t.Fatalf("logged stuck before %s:\n%s", stuckAfter, log.String())
		}
		time.Sleep(3 * heartbeat)
		synctest.Wait()
		if s := log.String(); strings.Count(s, "has not answered") != 1 || !strings.Contains(s, "stack=") {
			t.Fatalf("after %s stuck, the log has:\n%s", stuckAfter+3*heartbeat, s)
		}
		time.Sleep(10 * heartbeat)
		synctest.Wait()
		if strings.Count(log.String(), "has not answered") != 1 {
			t.Fatalf("one stall logged more than once:\n%s", log.String())
		}
		mu.Lock()
		for _, f := range held {
			f()
		}
		mu.Unlock()
		synctest.Wait()
		if !strings.Contains(log.String(), "answers again") {
			t.Fatalf("the thread's return is not logged:\n%s", log.String())
		}
	})
}

// withLogger is a logger into l.
func withLogger(l *logBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// TestTheStatusLineIsNotCut: a long message and Docker's reason for being
// away wrap in the status line instead of ending in "…".
func TestTheStatusLineIsNotCut(t *testing.T) {
	h := newHarness(t)
	s := snapshot(alpha)
	s.Docker = sandbox.DockerStatus{Error: "cannot reach the Docker daemon at unix:///var/run/docker.sock (the default): is the Docker daemon running? Start it, or point DOCKER_HOST (or docker.host in config.toml) at one that is"}
	h.feed(s)
	msg := "Could not stop every ephemeral sandbox: stop sandbox data-cleanup: the Docker daemon did not answer within 30 s; it may be busy: try again"
	h.u.status.showMessage(msg, kindError)
	h.u.win.Resize(fyne.NewSize(1180, 760))
	for _, l := range []*widget.Label{h.u.status.message.label, h.u.status.docker} {
		var shown strings.Builder
		for _, o := range test.LaidOutObjects(l) {
			if tx, ok := o.(*canvas.Text); ok {
				shown.WriteString(tx.Text + " ")
			}
		}
		if got := strings.Join(strings.Fields(shown.String()), " "); got != strings.Join(strings.Fields(l.Text), " ") {
			t.Errorf("the status line shows %q of %q", got, l.Text)
		}
	}
}

// TestGuardedCallbacksKeepTheirArguments: a guarded callback gets the
// arguments and gives back the results of the one it wraps, variadic too,
// and a panic in one gives zero values back (a blank object where it makes
// one).
func TestGuardedCallbacksKeepTheirArguments(t *testing.T) {
	h := newHarness(t)
	var got []string
	join := func(sep string, parts ...string) string { return strings.Join(parts, sep) }
	w := h.u.wrap("join", reflect.ValueOf(join), false).Interface().(func(string, ...string) string)
	if s := w("-", "a", "b"); s != "a-b" {
		t.Errorf("variadic: %q", s)
	}
	add := h.u.wrap("add", reflect.ValueOf(func(a, b int) int { got = append(got, "add"); return a + b }), false).Interface().(func(int, int) int)
	if n := add(2, 3); n != 5 || len(got) != 1 {
		t.Errorf("add = %d (%v)", n, got)
	}
	create := h.u.wrap("create", reflect.ValueOf(func() fyne.CanvasObject { panic("no row") }), false).Interface().(func() fyne.CanvasObject)
	if o, ok := create().(*widget.Label); !ok || o.Text != "" {
		t.Errorf("a panicking CreateItem gives %#v; want a blank label", o)
	}
}
