//go:build cgo

package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/socket"
	"github.com/sandtray/sandtray/test/dockertest"
)

// blockingApp is Fyne's test app (no display) with an event loop as a
// real app's: Run, on the goroutine that calls it (as the app's main
// goroutine does), runs what fyne.Do and fyne.DoAndWait hand it, one at a
// time, until Quit. Its windows count how often they were brought to the
// front.
type blockingApp struct {
	fyne.App
	quit    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	tasks   []func()
	wake    chan struct{}
	windows []*countingWindow
}

func newBlockingApp(t *testing.T, made *atomic.Int32) func() fyne.App {
	return func() fyne.App {
		made.Add(1)
		a := &blockingApp{App: test.NewTempApp(t), quit: make(chan struct{}), wake: make(chan struct{}, 1)}
		fyne.SetCurrentApp(a) // fyne.Do comes to a's loop
		return a
	}
}

func (a *blockingApp) Run() {
	for {
		a.mu.Lock()
		tasks := a.tasks
		a.tasks = nil
		a.mu.Unlock()
		for _, f := range tasks {
			f()
		}
		select {
		case <-a.quit:
			return
		case <-a.wake:
		}
	}
}

func (a *blockingApp) Quit() { a.once.Do(func() { close(a.quit) }) }

func (a *blockingApp) Driver() fyne.Driver { return loopDriver{a.App.Driver(), a} }

// loopDriver hands fyne.Do's work to the app's loop.
type loopDriver struct {
	fyne.Driver
	a *blockingApp
}

func (d loopDriver) DoFromGoroutine(f func(), wait bool) {
	done := make(chan struct{})
	d.a.mu.Lock()
	d.a.tasks = append(d.a.tasks, func() { f(); close(done) })
	d.a.mu.Unlock()
	select {
	case d.a.wake <- struct{}{}:
	default:
	}
	if wait {
		<-done
	}
}

func (a *blockingApp) NewWindow(title string) fyne.Window {
	w := &countingWindow{Window: a.App.NewWindow(title)}
	a.mu.Lock()
	a.windows = append(a.windows, w)
	a.mu.Unlock()
	return w
}

// main is the app's first window, the main one, once the app has made it:
// the engine may report the app attached a moment before.
func (a *blockingApp) main(t *testing.T) *countingWindow {
	t.Helper()
	var w *countingWindow
	testwait.Eventually(t, 30*time.Second, "the app to make its window", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.windows) > 0 {
			w = a.windows[0]
		}
		return w != nil
	})
	return w
}

// window is the app's i-th window (0 is the first), once made.
func (a *blockingApp) window(t *testing.T, i int) *countingWindow {
	t.Helper()
	var w *countingWindow
	testwait.Eventually(t, 60*time.Second, "the app to make its window", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.windows) > i {
			w = a.windows[i]
		}
		return w != nil
	})
	return w
}

type countingWindow struct {
	fyne.Window
	focused atomic.Int32
}

func (w *countingWindow) RequestFocus() {
	w.focused.Add(1)
	w.Window.RequestFocus()
}

// shows reports whether the window's content shows text in a label.
func (w *countingWindow) shows(text string) bool {
	found := false
	fyne.DoAndWait(func() {
		c := w.Content()
		if c == nil {
			return // the window is made, its content not yet set
		}
		w.Resize(fyne.NewSize(1000, 700))
		for _, o := range test.LaidOutObjects(c) {
			switch o := o.(type) {
			case *widget.Label:
				found = found || (o.Visible() && strings.Contains(o.Text, text))
			case *canvas.Text: // a rich text's line
				found = found || (o.Visible() && strings.Contains(o.Text, text))
			}
		}
	})
	return found
}

// testOptions are the options of an engine on a socket, config and state
// of the test's own, with the test's image and labels.
func testOptions(t *testing.T) Options {
	t.Helper()
	image := dockertest.Image(t)
	labels := dockertest.Labels(t)
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	t.Setenv(socket.EnvSocket, filepath.Join(runDir, "mcp.sock"))
	t.Setenv(TestLabelEnv, labels[sandbox.LabelTest])
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("default_image = %q\n[pool]\nsize = 0\n[host]\nallowed_roots = [%q]\n", image, dir)), 0o600)
	return Options{Version: "test", ConfigPath: cfg, StateDir: filepath.Join(dir, "state"), Stderr: io.Discard}
}

// headlessEngine runs `sandtray serve` (Serve) in this process on a socket
// of the test's own, as the shim starts it for an assistant, and returns
// its options and a stop function.
func headlessEngine(t *testing.T) (Options, func()) {
	opts, stop, _ := headlessEngineDone(t)
	return opts, stop
}

// headlessEngineDone is headlessEngine, with what Serve returned.
func headlessEngineDone(t *testing.T) (Options, func(), <-chan error) {
	t.Helper()
	opts := testOptions(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, opts) }()
	testwait.Eventually(t, 30*time.Second, "the headless engine to serve its control endpoint", func() bool {
		mcpPath, _ := socket.Path()
		c, err := socket.DialPrivate(context.Background(), control.Path(mcpPath))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	var servedErr error
	ended := make(chan struct{})
	go func() { // the engine may also end of itself (control.MethodEngineStop)
		servedErr = <-served
		close(ended)
	}()
	result := make(chan error, 1)
	go func() { <-ended; result <- servedErr }()
	stop := sync.OnceFunc(func() {
		cancel()
		<-ended
		if servedErr != nil {
			t.Errorf("the headless engine: %v", servedErr)
		}
	})
	t.Cleanup(stop)
	return opts, stop, result
}

// mcpSession connects an assistant's MCP session to the engine's socket.
func mcpSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	path, _ := socket.Path()
	conn, err := socket.DialPrivate(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "app-test", Version: "1.0"}, nil)
	s, err := cl.Connect(context.Background(), &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: %+v", name, res.Content)
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out
}

func engineWindow(t *testing.T) string {
	t.Helper()
	mcpPath, _ := socket.Path()
	conn, err := socket.DialPrivate(context.Background(), control.Path(mcpPath))
	if err != nil {
		t.Fatal(err)
	}
	c := control.NewClient(conn)
	defer c.Close()
	st, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Window
}

// TestAppOpensOnTheHeadlessEngine is one app per user, whoever starts
// first: with an assistant's headless engine running, starting the app
// opens a window on that engine, listing its sandboxes; starting it again
// brings that window to the front and ends at once, without making an app;
// the assistant's MCP session works throughout, and after the app quits,
// and the engine has no window again.
func TestAppOpensOnTheHeadlessEngine(t *testing.T) {
	opts, _ := headlessEngine(t)
	assistant := mcpSession(t)
	made := callTool(t, assistant, "create_sandbox", map[string]any{"name": "assistants-box"})
	if made["sandbox_id"] == nil {
		t.Fatalf("create_sandbox: %v", made)
	}

	var apps atomic.Int32
	newApp := newBlockingApp(t, &apps)
	firstMade := make(chan *blockingApp, 1)
	firstApp := func() fyne.App {
		a := newApp()
		firstMade <- a.(*blockingApp)
		return a
	}
	ctx, quitFirst := context.WithCancel(context.Background())
	defer quitFirst()
	ran := make(chan error, 1)
	go func() { ran <- RunApp(ctx, firstApp, opts) }()
	testwait.Eventually(t, 30*time.Second, "the app to attach to the headless engine", func() bool {
		select {
		case err := <-ran:
			t.Fatalf("the app ended at once: %v", err)
		default:
		}
		return engineWindow(t) == control.WindowAttached
	})
	// The window's way in is as private as the MCP socket: the user's own
	// 0700 folder, a 0600 socket (and only peers of the user's uid).
	mcpPath, _ := socket.Path()
	for path, want := range map[string]os.FileMode{control.Path(mcpPath): 0o600, filepath.Dir(mcpPath): 0o700} {
		if fi, err := os.Stat(path); err != nil {
			t.Error(err)
		} else if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	win := (<-firstMade).main(t)
	testwait.Eventually(t, 30*time.Second, "the window to list the assistant's sandbox", func() bool {
		return win.shows("assistants-box")
	})
	if out := callTool(t, assistant, "execute_code", map[string]any{"sandbox_id": "assistants-box", "code": "print(6*7)"}); out["stdout"] != "42\n" {
		t.Errorf("the assistant's session with the app attached: %v", out)
	}

	before := win.focused.Load()
	if err := RunApp(context.Background(), newApp, opts); !errors.Is(err, ErrFocused) {
		t.Fatalf("a second start of the app: %v, want ErrFocused", err)
	}
	if n := apps.Load(); n != 1 {
		t.Errorf("%d apps made; the second start must make none", n)
	}
	testwait.Eventually(t, 10*time.Second, "the first window to come to the front", func() bool {
		return win.focused.Load() > before
	})

	quitFirst()
	if err := <-ran; err != nil {
		t.Fatalf("the app quit with %v", err)
	}
	testwait.Eventually(t, 10*time.Second, "the engine to be headless again", func() bool {
		return engineWindow(t) == control.WindowNone
	})
	if out := callTool(t, assistant, "execute_code", map[string]any{"sandbox_id": "assistants-box", "code": "print('still here')"}); out["stdout"] != "still here\n" {
		t.Errorf("the assistant's session after the app quit: %v", out)
	}
}

// TestSecondStartFocusesTheAppsWindow: when the app runs the engine itself
// (it started first), a second start brings its window to the front and
// ends without making an app; the assistants' sessions carry on.
func TestSecondStartFocusesTheAppsWindow(t *testing.T) {
	opts := testOptions(t)
	var apps atomic.Int32
	newApp := newBlockingApp(t, &apps)
	firstMade := make(chan *blockingApp, 1)
	ctx, quit := context.WithCancel(context.Background())
	defer quit()
	ran := make(chan error, 1)
	go func() {
		ran <- RunApp(ctx, func() fyne.App {
			a := newApp()
			firstMade <- a.(*blockingApp)
			return a
		}, opts)
	}()
	testwait.Eventually(t, 60*time.Second, "the app's engine to serve with its window", func() bool {
		select {
		case err := <-ran:
			t.Fatalf("the app ended at once: %v", err)
		default:
		}
		mcpPath, _ := socket.Path()
		conn, err := socket.DialPrivate(context.Background(), control.Path(mcpPath))
		if err != nil {
			return false
		}
		c := control.NewClient(conn)
		defer c.Close()
		st, err := c.Status(context.Background())
		return err == nil && st.Window == control.WindowOwn
	})
	assistant := mcpSession(t)
	win := (<-firstMade).main(t)
	testwait.Eventually(t, 10*time.Second, "the window to show", func() bool { return win.focused.Load() > 0 })
	before := win.focused.Load()
	if err := RunApp(context.Background(), newApp, opts); !errors.Is(err, ErrFocused) {
		t.Fatalf("a second start of the app: %v, want ErrFocused", err)
	}
	if n := apps.Load(); n != 1 {
		t.Errorf("%d apps made; the second start must make none", n)
	}
	testwait.Eventually(t, 10*time.Second, "the first window to come to the front", func() bool {
		return win.focused.Load() > before
	})
	if out := callTool(t, assistant, "execute_command", map[string]any{"command": "echo ok"}); out["stdout"] != "ok\n" {
		t.Errorf("the assistant's session: %v", out)
	}
	quit()
	if err := <-ran; err != nil {
		t.Errorf("the app quit with %v", err)
	}
}

// TestRestartNowMovesTheEngineIntoTheApp: an attached app's Restart now
// (control.MethodEngineStop) stops the headless engine keeping its
// sandboxes, ephemeral ones too; the app then ends with ErrRestart once the
// socket is free, so that it starts again as the engine.
func TestRestartNowMovesTheEngineIntoTheApp(t *testing.T) {
	opts, _, served := headlessEngineDone(t)
	assistant := mcpSession(t)
	made := callTool(t, assistant, "create_sandbox", map[string]any{"name": "kept"})
	var apps atomic.Int32
	ran := make(chan error, 1)
	go func() { ran <- RunApp(context.Background(), newBlockingApp(t, &apps), opts) }()
	testwait.Eventually(t, 30*time.Second, "the app to attach", func() bool { return engineWindow(t) == control.WindowAttached })

	mcpPath, _ := socket.Path()
	conn, err := socket.DialPrivate(context.Background(), control.Path(mcpPath))
	if err != nil {
		t.Fatal(err)
	}
	c := control.NewClient(conn)
	defer c.Close()
	if err := c.Call(context.Background(), control.MethodEngineStop, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("the engine stopped with %v", err)
	}
	if err := <-ran; !errors.Is(err, ErrRestart) {
		t.Fatalf("the app ended with %v, want ErrRestart", err)
	}
	ln, err := listen(io.Discard)
	if err != nil {
		t.Fatalf("the socket is not free for the app started again: %v", err)
	}
	ln.Close()
	if _, err := dockertest.Client(t).Inspect(context.Background(), made["sandbox_id"].(string)); err != nil {
		t.Errorf("the ephemeral sandbox did not outlive the engine's stop for the restart: %v", err)
	}
}

// TestSettingsApplyToTheNextSandbox: Settings' Save in a window on a
// headless engine (settings.apply on the control endpoint) applies a
// changed memory limit to the next create_sandbox of an assistant's
// session, without a restart, and names the changed HTTP listen address as
// waiting for one.
func TestSettingsApplyToTheNextSandbox(t *testing.T) {
	opts, _ := headlessEngine(t)
	assistant := mcpSession(t)
	b, err := os.ReadFile(opts.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "[limits]\nmemory_mb = 300\n[http]\nlisten = \"127.0.0.1:18769\"\n"...)
	if err := os.WriteFile(opts.ConfigPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	mcpPath, _ := socket.Path()
	conn, err := socket.DialPrivate(context.Background(), control.Path(mcpPath))
	if err != nil {
		t.Fatal(err)
	}
	c := control.NewClient(conn)
	defer c.Close()
	var applied control.AppliedSettings
	if err := c.Call(context.Background(), control.MethodApplySettings, nil, &applied); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(applied.Restart) != "[http.listen]" {
		t.Errorf("waiting for a restart: %q, want [http.listen]", applied.Restart)
	}
	made := callTool(t, assistant, "create_sandbox", map[string]any{})
	raw, err := dockertest.Client(t).InspectRaw(context.Background(), made["sandbox_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), fmt.Sprintf(`"Memory":%d,`, 300<<20)) {
		t.Errorf("the next sandbox does not have the new 300 MB limit")
	}
}

// TestAppBesideAStdioEngine: an assistant's `sandtray serve --stdio` binds
// no MCP socket, so the app started beside it finds the socket free; it
// must not start a second engine on the same state dir (which would reap
// the assistant's sandboxes, docs/security.md F55). It ends at once with
// what to do, and the stdio engine carries on.
func TestAppBesideAStdioEngine(t *testing.T) {
	opts := testOptions(t)
	stdin, feed := io.Pipe()
	stdio := opts
	stdio.Stdio, stdio.Stdin, stdio.Stdout = true, stdin, io.Discard
	served := make(chan error, 1)
	go func() { served <- Serve(context.Background(), stdio) }()
	t.Cleanup(func() {
		feed.Close() // the client goes: the engine ends
		if err := <-served; err != nil {
			t.Errorf("the stdio engine: %v", err)
		}
	})
	testwait.Eventually(t, 30*time.Second, "the stdio engine to serve its control endpoint", func() bool {
		mcpPath, _ := socket.Path()
		c, err := socket.DialPrivate(context.Background(), control.Path(mcpPath))
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	var apps atomic.Int32
	ran := make(chan error, 1)
	go func() { ran <- RunApp(context.Background(), newBlockingApp(t, &apps), opts) }()
	select {
	case err := <-ran:
		if err == nil || !strings.Contains(err.Error(), "another Sandtray engine is running on this state dir") || !strings.Contains(err.Error(), "sandtray-mcp") {
			t.Errorf("the app beside a stdio engine ended with %v; want the state dir's refusal, naming sandtray-mcp", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the app beside a stdio engine is running (an engine of its own on the same state dir, or a window on the stdio engine)")
	}
	if got := engineWindow(t); got != control.WindowNone {
		t.Errorf("the stdio engine after the app's start: window %q, want it still serving, headless", got)
	}
}
