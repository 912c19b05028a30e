//go:build cgo

package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"

	"github.com/sandtray/sandtray/assets"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/ui"
)

// parkHidden is whether Fyne's event loop may sleep while the window is
// hidden (ui.Options.ParkHidden): on Linux and the BSDs, whose tray talks
// D-Bus from its own goroutines. macOS's tray runs on the main thread, and
// Windows is not measured yet.
const parkHidden = runtime.GOOS != "darwin" && runtime.GOOS != "windows"

// RunGUI runs the tray app: the engine, the MCP socket and the window. It must
// be called on the main goroutine (Fyne's rule) and returns when the person
// quits or ctx is done. Quitting from the tray asks whether to stop the
// ephemeral sandboxes; stopping for any other reason removes them.
//
// When another engine of this user runs already, RunApp (app.go) is what
// opens a window on it; RunGUI fails with socket.ErrAlreadyRunning.
func RunGUI(ctx context.Context, a fyne.App, opts Options) error {
	ln, err := listen(opts.Stderr)
	if err != nil {
		return err
	}
	return runGUI(ctx, a, opts, ln)
}

// runGUI is RunGUI on the bound socket ln, which it closes. When the
// engine cannot start for a reason a person can fix (Docker unreachable, a
// config the engine refuses), the app still opens a window: it shows why
// and what to do, with Try again, and the socket answers every request
// with the same reason until the engine runs.
func runGUI(ctx context.Context, a fyne.App, opts Options, ln *listener) error {
	defer ln.Close()
	logPath, closeLog := teeLog(&opts) // Help → Open log… shows it
	defer closeLog()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &guiApp{a: a, opts: opts, ln: ln, logPath: logPath, ctx: ctx, cancel: cancel,
		log: slog.New(slog.NewTextHandler(opts.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})), gate: newGate("")}
	c, err := start(ctx, opts)
	var pr *ui.Problem
	if err != nil {
		if pr = problemOf(err, opts); pr == nil {
			return err
		}
	}
	// The socket serves from now on: the engine's MCP server, or why not.
	g.wg.Go(func() {
		defer cancel() // without its socket the app is no use: quit
		err := ln.serve(ctx, g.gate, g.log)
		g.mu.Lock()
		g.serveErr = err
		g.mu.Unlock()
	})
	if pr != nil {
		g.waitForEngine(*pr, err)
	} else {
		g.begin(c)
	}
	quit := context.AfterFunc(ctx, func() { fyne.Do(a.Quit) })
	defer quit()
	shutdown := sync.OnceValue(g.shutdown)
	// A window whose thread is stuck never runs the Quit that a stop
	// (SIGTERM, Quit in the tray) queues for it: the engine stops without
	// it, its ephemeral sandboxes removed as on any stop, and the process
	// ends.
	ranOut := make(chan struct{})
	stuck := context.AfterFunc(ctx, func() {
		select {
		case <-ranOut:
		case <-time.After(stuckQuitAfter):
			g.log.Error("the window did not close within " + stuckQuitAfter.String() + " of the stop: its thread is stuck; stopping the engine without it")
			if err := shutdown(); err != nil && !errors.Is(err, ErrRestart) {
				fmt.Fprintln(opts.Stderr, "sandtray:", err)
			}
			exitProcess(0)
		}
	})
	defer stuck()
	a.Run()
	close(ranOut)
	return shutdown()
}

// guiApp is the tray app that runs the engine: its window, once the
// engine runs, and until then the window that says why it does not.
type guiApp struct {
	a       fyne.App
	opts    Options
	ln      *listener
	logPath string
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	gate    *gate
	wg      sync.WaitGroup // the socket, the tries to start

	mu       sync.Mutex
	c        *core // nil until the engine runs
	waitHTTP func() error
	serveErr error
	uiDone   chan struct{} // closed when the window's Run has ended; nil before it runs

	keepEphemeral, restart atomic.Bool
}

// begin has the socket serve the engine, then shows its window. Runs on
// the main goroutine before the app runs.
func (g *guiApp) begin(c *core) {
	g.takeEngine(c)
	g.showWindow(c)
}

// takeEngine makes c the app's engine: the socket serves it, and the app
// stops it when it ends, whether or not its window came.
func (g *guiApp) takeEngine(c *core) {
	waitHTTP := c.serveHTTP(g.ctx, g.cancel)
	g.mu.Lock()
	g.c, g.waitHTTP = c, waitHTTP
	g.mu.Unlock()
	g.gate.open(c.srv)
}

// showWindow shows the engine's window. Runs on the main goroutine before
// the app runs, or on Fyne's after.
func (g *guiApp) showWindow(c *core) {
	if g.ctx.Err() != nil {
		return // the app is ending: shutdown stops the engine
	}
	if noTray, _ := desktopServices(); noTray != "" {
		c.log.Warn("no tray icon: the window stays reachable by minimising instead of hiding", "why", noTray)
	}
	// The window talks to the engine as an attached app's does, through
	// the control protocol, over an in-memory pipe.
	client := control.NewGUIClient(g.ctx, c.ctl.Pipe(g.ctx))
	u := newWindow(g.a, client, ui.Options{SocketPath: g.ln.Path(), Quit: func(stop bool) {
		g.keepEphemeral.Store(!stop)
		g.cancel()
	}, Restart: func() {
		g.restart.Store(true)
		g.keepEphemeral.Store(true) // the next start adopts them, and sessions reconnect through the shim
		g.cancel()
	}, About: g.opts.About, LogPath: g.logPath, Log: c.log, OutputDir: outputDir(g.opts)}, cmpOr(g.opts.ConfigPath, ConfigPath()))
	// A second start of the app brings this window to the front (app.go).
	c.ctl.SetWindow(func() { fyne.Do(u.ShowWindow) })
	ran := make(chan struct{})
	g.mu.Lock()
	g.uiDone = ran
	g.mu.Unlock()
	go func() {
		defer close(ran)
		u.Run(g.ctx)
	}()
	u.ShowWindow() // a desktop without a tray host still gets a way in
}

// shutdown ends the app, once: the window's loop has ended, or it is stuck.
func (g *guiApp) shutdown() error {
	g.mu.Lock()
	c := g.c
	g.mu.Unlock()
	if c != nil {
		c.ctl.SetWindow(nil) // the engine may take a while to stop: no window to focus now
	}
	g.cancel()
	g.wg.Wait()
	g.mu.Lock()
	c, serveErr, waitHTTP, uiDone := g.c, g.serveErr, g.waitHTTP, g.uiDone
	g.mu.Unlock()
	if uiDone != nil {
		<-uiDone
	}
	if c == nil { // the engine never ran: nothing to stop
		return nil
	}
	if herr := waitHTTP(); herr != nil && (serveErr == nil || errors.Is(serveErr, context.Canceled)) {
		serveErr = herr
	}
	c.stop(g.ctx, g.keepEphemeral.Load())
	if g.restart.Load() {
		return ErrRestart
	}
	if errors.Is(serveErr, context.Canceled) {
		return nil
	}
	return serveErr
}

// stuckQuitAfter is how long a stop waits for the window's loop to end
// before it stops the engine without it.
var stuckQuitAfter = 5 * time.Second

// exitProcess ends the process (tests catch it).
var exitProcess = os.Exit

// newWindow makes the app's window on an engine, which it reaches through
// client (the control protocol: the app's own engine over a pipe, or an
// engine another process runs over its socket), with the desktop's
// features and Settings on configPath.
func newWindow(a fyne.App, client *control.GUIClient, o ui.Options, configPath string) *ui.UI {
	a.SetIcon(fyne.NewStaticResource("sandtray.png", assets.Icon))
	noTray, notifications := desktopServices()
	o.NoTray, o.NoNotifications, o.Iconify, o.ParkHidden = noTray, !notifications, iconifyX11, parkHidden
	o.Images = client
	return ui.New(a, client, withDesktop(o, configPath, client.ApplySettings))
}

// outputDir is where the window writes an output too long to show when
// the person opens it whole: beside the state.
func outputDir(opts Options) string { return filepath.Join(cmpOr(opts.StateDir, StateDir()), "output") }

// ErrRestart is RunGUI's return when the person asked to restart
// (Settings' Restart now): the app has shut down cleanly, and the caller
// starts it again (Reexec).
var ErrRestart = errors.New("restart asked for")
