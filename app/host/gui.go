//go:build cgo

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"

	"github.com/sandtray/sandtray/assets"
	"github.com/sandtray/sandtray/engine/control"
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

// runGUI is RunGUI on the bound socket ln, which it closes.
func runGUI(ctx context.Context, a fyne.App, opts Options, ln *listener) error {
	defer ln.Close()
	logPath, closeLog := teeLog(&opts) // Help → Open log… shows it
	defer closeLog()
	c, err := start(ctx, opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var keepEphemeral, restart atomic.Bool
	if noTray, _ := desktopServices(); noTray != "" {
		c.log.Warn("no tray icon: the window stays reachable by minimising instead of hiding", "why", noTray)
	}
	// The window talks to the engine as an attached app's does, through
	// the control protocol, over an in-memory pipe.
	client := control.NewGUIClient(ctx, c.ctl.Pipe(ctx))
	u := newWindow(a, client, ui.Options{SocketPath: ln.Path(), Quit: func(stop bool) {
		keepEphemeral.Store(!stop)
		cancel()
	}, Restart: func() {
		restart.Store(true)
		keepEphemeral.Store(true) // the next start adopts them, and sessions reconnect through the shim
		cancel()
	}, About: opts.About, LogPath: logPath, Log: c.log, OutputDir: outputDir(opts)}, cmpOr(opts.ConfigPath, ConfigPath()))
	// A second start of the app brings this window to the front (app.go).
	c.ctl.SetWindow(func() { fyne.Do(u.ShowWindow) })

	waitHTTP := c.serveHTTP(ctx, cancel)
	var wg sync.WaitGroup
	var serveErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		u.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		defer cancel() // without its socket the app is no use: quit
		serveErr = ln.serve(ctx, c.srv, c.log)
	}()
	quit := context.AfterFunc(ctx, func() { fyne.Do(a.Quit) })
	defer quit()
	// What ends the app, once: after the window's loop returns, or without
	// it when the loop does not answer the stop (below).
	shutdown := sync.OnceValue(func() error {
		c.ctl.SetWindow(nil) // the engine may take a while to stop: no window to focus now
		cancel()
		wg.Wait()
		if herr := waitHTTP(); herr != nil && (serveErr == nil || errors.Is(serveErr, context.Canceled)) {
			serveErr = herr
		}
		c.stop(ctx, keepEphemeral.Load())
		if restart.Load() {
			return ErrRestart
		}
		if errors.Is(serveErr, context.Canceled) {
			return nil
		}
		return serveErr
	})
	// A window whose thread is stuck never runs the Quit that a stop
	// (SIGTERM, Quit in the tray) queues for it: the engine stops without
	// it, its ephemeral sandboxes removed as on any stop, and the process
	// ends.
	ranOut := make(chan struct{})
	stuck := context.AfterFunc(ctx, func() {
		select {
		case <-ranOut:
		case <-time.After(stuckQuitAfter):
			c.log.Error("the window did not close within " + stuckQuitAfter.String() + " of the stop: its thread is stuck; stopping the engine without it")
			err := shutdown()
			if err != nil && !errors.Is(err, ErrRestart) {
				fmt.Fprintln(opts.Stderr, "sandtray:", err)
			}
			exitProcess(0)
		}
	})
	defer stuck()

	u.ShowWindow() // a desktop without a tray host still gets a way in
	a.Run()
	close(ranOut)
	return shutdown()
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
