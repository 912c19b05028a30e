//go:build cgo

package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/socket"
	"github.com/sandtray/sandtray/ui"
)

// One app per user, whoever starts first.
//
// When the app starts while an engine of this user runs already (the
// normal order: an assistant's sandtray-mcp shim started `sandtray serve`),
// the app becomes that engine's window: a GUI client over the engine's
// private control endpoint (serve/control's window protocol, the one the
// app's own window speaks over a pipe). The engine is not handed over to
// the app. A hand-over would have to move live MCP sessions from one
// process to another: the shim is a byte pipe to the socket, so its
// sessions would be cut (with their calls in flight, their background jobs'
// followers and their ephemeral sandboxes' owners), and a stdio session
// cannot move at all. As a client the app changes nothing in the engine:
// every session carries on, and the window shows exactly what the engine
// has. The price is one more process while the window is open, and
// settings that need a restart wait for the engine's next start.
//
// An engine has at most one window (its own, or one attached app's): a
// further start of the app asks that window to come to the front
// (control's app.focus) and exits with ErrFocused.

// ErrFocused is RunApp's answer when Sandtray's window was open already
// and has been brought to the front instead of opening another: the caller
// says so and exits successfully.
var ErrFocused = errors.New("Sandtray is open already: its window was brought to the front")

// controlDialTimeout bounds reaching a running engine's control endpoint.
const controlDialTimeout = 10 * time.Second

// RunApp starts the app: the engine with its window (RunGUI) when no
// engine of this user runs; else the window of the running engine (see
// above), or ErrFocused when that engine has a window already. newApp makes
// the Fyne app, only when a window is to be shown. It must be called on
// the main goroutine.
func RunApp(ctx context.Context, newApp func() fyne.App, opts Options) error {
	ln, err := listen(opts.Stderr)
	if err == nil {
		return runGUI(ctx, newApp(), opts, ln)
	}
	if !errors.Is(err, socket.ErrAlreadyRunning) {
		return err
	}
	return joinEngine(ctx, newApp, opts, err)
}

// joinEngine opens a window on the engine that runs (running is why this
// app could not start its own), or brings its window to the front.
func joinEngine(ctx context.Context, newApp func() fyne.App, opts Options, running error) error {
	mcpPath, err := socket.Path()
	if err != nil {
		return running
	}
	path := control.Path(mcpPath)
	dial := func(ctx context.Context) (net.Conn, error) { return socket.DialPrivate(ctx, path) }
	for range 3 { // a race with another start of the app is settled in the engine: one attaches, the other focuses
		st, err := focus(ctx, dial)
		switch {
		case err == nil:
			return ErrFocused
		case errors.Is(err, sandbox.ErrInvalid):
			return fmt.Errorf("%w; it is an older Sandtray that cannot show this app's window: quit it (it stops with your assistants' sessions) and start the app again", running)
		case !control.IsNoWindow(err):
			return fmt.Errorf("%w; its control endpoint %s does not answer (%v), so this app cannot show it: quit that engine and start the app again", running, path, err)
		case st.MCPSocket != mcpPath:
			return fmt.Errorf("%w; the engine on %s serves one assistant on stdio, not %s: quit it and start the app again", running, path, mcpPath)
		}
		err = runClient(ctx, newApp, opts, dial, st)
		if !errors.Is(err, sandbox.ErrConflict) {
			return err
		}
	}
	return running
}

// focus asks the engine's window to come to the front; a headless engine
// answers control.ErrNoWindow and its status.
func focus(ctx context.Context, dial control.Dialer) (control.AppStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, controlDialTimeout)
	defer cancel()
	conn, err := dial(ctx)
	if err != nil {
		return control.AppStatus{}, err
	}
	c := control.NewClient(conn)
	defer c.Close()
	if _, err := c.Focus(ctx); err != nil {
		st, serr := c.Status(ctx)
		if serr != nil {
			return st, errors.Join(err, serr)
		}
		return st, err
	}
	return control.AppStatus{}, nil
}

// runClient is the app as the window of a running engine, until the
// person quits, ctx is done or the engine goes away (then ErrRestart: the
// app starts again, and becomes the engine itself). A conflict means
// another app attached first.
func runClient(ctx context.Context, newApp func() fyne.App, opts Options, dial control.Dialer, st control.AppStatus) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := dial(ctx)
	if err != nil {
		return err
	}
	ac := control.NewClient(conn)
	defer ac.Close()
	attached := make(chan struct{})
	var show atomic.Pointer[func()]
	ended := make(chan error, 1)
	go func() {
		ended <- ac.Attach(ctx, func() { close(attached) }, func() {
			if f := show.Load(); f != nil {
				(*f)()
			}
		})
	}()
	select {
	case <-attached:
	case err := <-ended:
		return err
	case <-ctx.Done():
		return nil
	}

	a := newApp()
	client := control.NewGUIClient(ctx, dial)
	// Restart now: the engine stops, keeping its sandboxes; the attach
	// stream ends with it, and the app starts again as the engine.
	restart := func() {
		go func() {
			ctx, cancel := context.WithTimeout(ctx, controlDialTimeout)
			defer cancel()
			if err := client.Call(ctx, control.MethodEngineStop, nil, nil); err != nil {
				fmt.Fprintln(opts.Stderr, "sandtray: the engine did not stop for the restart:", err)
			}
		}()
	}
	// Help → Open log…: the log the shim keeps of the engine it started.
	logPath := filepath.Join(cmpOr(opts.StateDir, StateDir()), "engine.log")
	if _, err := os.Stat(logPath); err != nil {
		logPath = ""
	}
	u := newWindow(a, client, ui.Options{SocketPath: st.MCPSocket, Attached: true, Restart: restart, LogPath: logPath,
		Quit: func(bool) { cancel() }, About: opts.About, Log: slog.New(slog.NewTextHandler(opts.Stderr, nil)), OutputDir: outputDir(opts)},
		cmpOr(st.ConfigPath, cmpOr(opts.ConfigPath, ConfigPath())))
	f := func() { fyne.Do(u.ShowWindow) }
	show.Store(&f)

	var gone atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() { u.Run(ctx) })
	wg.Go(func() {
		select {
		case <-ended: // the engine went away (or ctx ended the stream)
			gone.Store(ctx.Err() == nil)
			cancel()
		case <-ctx.Done():
		}
	})
	quit := context.AfterFunc(ctx, func() { fyne.Do(a.Quit) })
	defer quit()
	fmt.Fprintln(opts.Stderr, "sandtray: showing the window of the Sandtray engine that runs already (started for an assistant); quitting this app leaves that engine running")
	u.ShowWindow()
	a.Run()
	show.Store(nil)
	cancel()
	wg.Wait()
	if gone.Load() {
		fmt.Fprintln(opts.Stderr, "sandtray: the engine this window showed has stopped; starting the app again, as the engine")
		waitReleased(context.WithoutCancel(ctx))
		return ErrRestart
	}
	return nil
}

// releaseTimeout bounds waiting for a stopping engine to let go of the
// socket (it removes nothing, but closes its containers' streams).
const releaseTimeout = 30 * time.Second

// waitReleased waits until no engine holds the MCP socket, so that the app
// started again takes it; another engine that takes it first is simply
// the one the app then shows.
func waitReleased(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		ln, err := listen(io.Discard)
		if err == nil {
			ln.Close()
			return
		}
		if !errors.Is(err, socket.ErrAlreadyRunning) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
