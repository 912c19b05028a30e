// Package ui is Sandtray's face: a tray menu and a window that show a person
// what their AI assistants are doing in sandboxes, and let them stop, kill,
// delete, persist, commit or export a sandbox with a click.
//
// The UI sees the engine only through its own Backend interface and the
// engine/sandbox types. It follows the engine's snapshots on Run's goroutine
// and hands each to Fyne's goroutine; button clicks call the backend from a
// goroutine and show the result back on Fyne's goroutine. State lives in a
// plain-Go model, formatting in pure functions (format.go), widgets in views.
package ui

import (
	"cmp"
	"context"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

// Backend is what the UI needs from the engine: control.GUIClient, the
// engine's window protocol, which the app uses whether it runs the engine
// (over an in-memory pipe) or attached to one (over the control socket).
type Backend interface {
	Jobs // background jobs for the Jobs view (jobs.go)
	Watch(ctx context.Context) Snapshots
	Logs(ctx context.Context, ref string, q control.LogsQuery) ([]control.LogEntry, error)
	ActivityEntry(ctx context.Context, ref string, at time.Time) (sandbox.Activity, error)
	ListFiles(ctx context.Context, owner sandbox.Owner, ref, path string, depth int, all bool) (sandbox.Listing, error)
	ReadFile(ctx context.Context, owner sandbox.Owner, ref, path string, offset, limit int64) (sandbox.FileContent, error)
	SaveFiles(ctx context.Context, ref, path, hostPath string) (sandbox.CopyResult, error) // a destination the human picked; hostPath must not exist yet
	Stop(ctx context.Context, owner sandbox.Owner, ref string) (sandbox.Info, error)
	Kill(ctx context.Context, ref string) error
	Delete(ctx context.Context, owner sandbox.Owner, ref string) error
	SetPersistent(ctx context.Context, owner sandbox.Owner, ref string, persistent bool) (sandbox.Info, error)
	Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error)
	ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) // hostPath "" = preview text only
	SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error)                         // folder the human picked
	SetPaused(paused bool)
	StopEphemeral(ctx context.Context) error
}

// Snapshots yields the engine's snapshots, the newest first; Next blocks
// until one is available or ctx is done. It is the control protocol's.
type Snapshots = control.Snapshots

// Options configures the UI.
type Options struct {
	SocketPath string                   // shown in the status line
	Quit       func(stopEphemeral bool) // called after the quit confirmation; the host shuts down
	Restart    func()                   // optional: Settings' Restart now; the host shuts down and starts again
	Notify     func(title, body string) // optional; default uses fyne.App.SendNotification

	// Optional desktop features; each is hidden when nil.
	Clients   Clients   // the Clients window and "Connect an assistant…"
	Settings  Settings  // the Settings window
	Autostart Autostart // the tray's "Start at login"
	Terminal  Terminal  // the Terminal button (else it copies the command)
	Diagnose  Diagnoser // Help → Diagnose (diagnose.go)
	Images    Images    // the first-run screen that builds the sandbox image (firstrun.go)
	About     string    // Help → About: the version and commit, e.g. "Sandtray 0.1.0 (commit …)"
	LogPath   string    // Help → Open log… shows this file's end ("" hides it)

	// NoTray says why the desktop shows no tray icon ("" where it does):
	// the window then says so once (notray.go), and closing it minimises
	// it instead of hiding it, so it stays reachable.
	NoTray string
	// NoNotifications says the desktop has no notification service:
	// notices go to the status line instead.
	NoNotifications bool
	// Iconify minimises a window by its X11 handle (nil where it cannot).
	Iconify func(x11Window uintptr) bool

	// Attached says the window shows an engine another process runs (one
	// an assistant started): quitting closes the app alone, and the engine
	// and its sandboxes carry on.
	Attached bool

	// ParkHidden lets Fyne's event loop sleep while the window is hidden
	// instead of waking 60 times a second (idle.go). Only for a desktop
	// whose tray does not need Fyne's goroutine (not macOS).
	ParkHidden bool

	// Log receives the window's own faults: a panic it recovered (with its
	// stack), a UI thread that stopped answering (guard.go, watchdog.go).
	// Nil: slog's default logger.
	Log *slog.Logger

	// OutputDir is where "open full log" writes an output too long to show
	// ("": a folder of the user's own in the system's temporary folder).
	OutputDir string
}

// owner is who the engine records as acting when a person clicks.
var owner = sandbox.Owner{Client: "Sandtray app"}

// UI is the tray menu and the main window. Create it with New.
type UI struct {
	app  fyne.App
	b    Backend
	opts Options
	win  fyne.Window
	m    *model // touched only on Fyne's goroutine
	log  *slog.Logger

	// Seams for tests; production values are set in New.
	do         func(func())                              // run on Fyne's goroutine
	queue      func(func())                              // run on Fyne's goroutine, without waking it (idle.go)
	parkWait   func(wake <-chan struct{})                // how park sleeps (idle.go)
	spawn      func(func())                              // run off Fyne's goroutine
	after      func(d time.Duration, f func())           // run on Fyne's goroutine after d
	now        func() time.Time                          // for ages
	openURL    func(*url.URL) error                      // the desktop's browser
	pickFolder func(title string, done func(dir string)) // a folder the human picks
	// pickHostFolder asks for a folder on top of win (the Settings window).
	pickHostFolder func(win fyne.Window, done func(dir string))

	mu  sync.Mutex
	ctx context.Context // Run's context, for backend calls started by clicks

	list   *sandboxList
	detail *detailPane
	status *statusBar
	tray   *trayMenu
	egress *egressAsk // the egress gate's approval dialog (egress.go)

	clients       *clientsWindow    // created on first use
	settings      *settingsWindow   // created on first use
	jobsWin       *jobsWindow       // created on first use
	shown         bool              // the window is on screen (statsdemand.go)
	statsAsked    []string          // what ShowStats was last told
	statsFollowed string            // what FollowStats was last told
	rowHeight     float32           // of the sandbox list, once measured
	parking       bool              // park is queued or running (idle.go)
	wake          chan struct{}     // ends a park at once
	noTray        fyne.CanvasObject // the no-tray notice, while shown
	firstRun      *firstRun         // the sandbox image's build, while it is missing
	walking       bool              // guardAll is under way (guard.go)
}

// New builds the window and the tray menu (when the app has a system tray);
// it does not show the window.
func New(a fyne.App, b Backend, opts Options) *UI {
	u := &UI{
		app: a, b: b, opts: opts, m: newModel(), log: cmp.Or(opts.Log, slog.Default()),
		queue:    fyne.Do,
		parkWait: waitWoken,
		wake:     make(chan struct{}, 1),
		spawn:    func(f func()) { go f() },
		now:      time.Now,
		// Until Run starts, clicks have no engine lifetime to follow.
		ctx: context.Background(),
	}
	u.do = func(f func()) { u.queue(u.task(f)); u.nudge() }
	u.openURL = a.OpenURL
	u.after = func(d time.Duration, f func()) { time.AfterFunc(d, func() { u.do(f) }) }
	if u.opts.Notify == nil {
		u.opts.Notify = func(title, body string) { a.SendNotification(fyne.NewNotification(title, body)) }
	}
	u.win = a.NewWindow("Sandtray")
	u.pickFolder = u.showFolderDialog
	u.pickHostFolder = showHostFolderDialog
	u.list = newSandboxList(u)
	u.detail = newDetailPane(u)
	u.status = newStatusBar(u)
	u.egress = newEgressAsk(u)
	split := container.NewVSplit(u.list.object(), u.detail.object())
	split.Offset = 0.38
	top := u.list.filterBar()
	if u.opts.Images != nil {
		u.firstRun = newFirstRun(u)
		top = container.NewVBox(u.firstRun.box, top)
	}
	if banner := u.noTrayBanner(); banner != nil {
		top = container.NewVBox(banner, top)
	}
	u.win.SetContent(container.NewBorder(top, u.status.object(), nil, nil, split))
	u.win.Resize(fyne.NewSize(1180, 760))
	u.tray = newTrayMenu(u)
	u.setMainMenu(u.mainMenu())
	u.addHelpMenu()
	if u.opts.Clients != nil {
		u.list.clientsChanged(anyConnected(u.opts.Clients.List()))
	}
	u.watchVisibility()
	u.guardAll()
	return u
}

// Run follows the engine's snapshots and shows each one. Call it in a
// goroutine; it does not return until ctx is done.
func (u *UI) Run(ctx context.Context) {
	u.mu.Lock()
	u.ctx = ctx
	u.mu.Unlock()
	if u.firstRun != nil {
		u.do(u.firstRun.check)
	}
	if u.tray.login != nil {
		u.do(func() { u.tray.login.watch(ctx) })
	}
	go u.watchdog(ctx)
	snaps := u.b.Watch(ctx)
	for {
		s, err := snaps.Next(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second): // a hiccup, not the end: try again
				continue
			}
		}
		// Wait until the snapshot is shown, so a slow window coalesces
		// snapshots in the engine's buffer of one instead of in Fyne's queue.
		shown := make(chan struct{})
		u.do(func() { u.apply(s); close(shown) })
		select {
		case <-shown:
		case <-ctx.Done():
			return
		}
	}
}

// ShowWindow shows the main window and brings it to the front.
func (u *UI) ShowWindow() {
	u.win.Show()
	u.win.RequestFocus()
	u.setShown(true)
}

// Window returns the main window.
func (u *UI) Window() fyne.Window { return u.win }

// apply shows a snapshot. It runs on Fyne's goroutine. Each part of the
// window is refreshed under its own guard: one that fails leaves the
// others up to date.
func (u *UI) apply(s sandbox.Snapshot) {
	var fresh []sandbox.Notice
	u.protect("reading a snapshot", func() { fresh = u.m.apply(s) })
	u.protect("the list's refresh", u.list.refresh)
	u.protect("the sandbox's refresh", u.detail.refresh)
	u.protect("the status line's refresh", u.status.refresh)
	u.protect("the tray menu's refresh", u.tray.refresh)
	if u.jobsWin != nil {
		u.protect("the Jobs window's refresh", u.jobsWin.view.refresh)
	}
	u.protect("the stats wanted", u.wantStats)
	u.protect("the egress requests' refresh", u.egress.refresh)
	for _, n := range fresh {
		u.protect("a notification", func() { u.notify(n.Title, n.Body) })
	}
}

// task is f as Fyne's goroutine runs it: guarded, and what it built
// guarded after it.
func (u *UI) task(f func()) func() {
	return func() {
		u.protect("a task", f)
		u.guardAll()
	}
}

// goSafe runs f off Fyne's goroutine, guarded.
func (u *UI) goSafe(where string, f func()) { u.spawn(func() { u.protect(where, f) }) }

// context returns the context backend calls run under.
func (u *UI) context() context.Context {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.ctx
}

// background runs work off Fyne's goroutine, then done with its error on it.
func (u *UI) background(work func(ctx context.Context) error, done func(error)) {
	ctx := u.context()
	u.goSafe("background work", func() {
		err := work(ctx)
		u.do(func() { done(err) })
	})
}

// selectSandbox makes id the sandbox the detail pane shows ("" for none).
func (u *UI) selectSandbox(id string) {
	if u.m.selected == id {
		return
	}
	u.m.selected = id
	u.detail.selectionChanged()
	u.wantStats()
}

func (u *UI) showFolderDialog(title string, done func(dir string)) {
	d := dialog.NewFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil || dir == nil {
			return
		}
		done(dir.Path())
	}, u.win)
	d.SetTitleText(title)
	d.SetConfirmText("Save here")
	d.Resize(fyne.NewSize(760, 520))
	d.Show()
}
