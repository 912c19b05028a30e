//go:build cgo

package host

import (
	"context"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/app/shim"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/socket"
)

// initializeThroughShim is an assistant's first request through
// sandtray-mcp: it returns the error its initialize got ("" when none).
func initializeThroughShim(t *testing.T) string {
	t.Helper()
	path, _ := socket.Path()
	cin, sout := io.Pipe() // the client writes, the shim reads
	sin, cout := io.Pipe() // the shim writes, the client reads
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- shim.Run(ctx, shim.Options{Stdin: cin, Stdout: cout, Stderr: io.Discard, SocketPath: path,
			StartEngine: func(context.Context) (<-chan struct{}, error) { t.Error("the shim started an engine"); return nil, nil }})
		cout.Close()
	}()
	cl := mcp.NewClient(&mcp.Implementation{Name: "problem-test", Version: "1.0"}, nil)
	s, err := cl.Connect(ctx, &mcp.IOTransport{Reader: sin, Writer: sout}, nil)
	if err == nil {
		s.Close()
	}
	sout.Close()
	<-ran
	if err == nil {
		return ""
	}
	return err.Error()
}

// tapIn taps the button labelled text in w.
func tapIn(t *testing.T, w fyne.Window, text string) {
	t.Helper()
	found := false
	fyne.DoAndWait(func() {
		for _, o := range test.LaidOutObjects(w.Content()) {
			if b, ok := o.(*widget.Button); ok && b.Text == text && b.Visible() && !b.Disabled() {
				test.Tap(b)
				found = true
				return
			}
		}
	})
	if !found {
		t.Fatalf("no button %q", text)
	}
}

// TestDockerDownOpensAWindowWithTheReason replays the app started with
// Docker down (from the applications menu, or at login before Docker
// Desktop is up): it used to exit with the reason on stderr and no window.
// Now its window says Docker cannot be reached, what to do and Try again;
// an assistant's initialize through sandtray-mcp gets the same reason as
// its JSON-RPC error; and once Docker answers, Try again brings the
// engine's window and the socket serves MCP.
func TestDockerDownOpensAWindowWithTheReason(t *testing.T) {
	opts := testOptions(t)
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	var apps atomic.Int32
	ctx, quit := context.WithCancel(context.Background())
	defer quit()
	ran := make(chan error, 1)
	made := make(chan *blockingApp, 1)
	newApp := newBlockingApp(t, &apps)
	go func() {
		ran <- RunApp(ctx, func() fyne.App { a := newApp(); made <- a.(*blockingApp); return a }, opts)
	}()
	var a *blockingApp
	select {
	case a = <-made:
	case err := <-ran:
		t.Fatalf("the app ended without a window: %v", err)
	}
	win := a.main(t)
	testwait.Eventually(t, 30*time.Second, "the window to say Docker cannot be reached", func() bool {
		return win.shows("Sandtray cannot reach Docker") && win.shows("Start Docker Desktop") && win.shows("nonexistent")
	})
	why := initializeThroughShim(t)
	for _, want := range []string{"Sandtray cannot reach Docker", "nonexistent/docker.sock", "Ask the user to start Docker Desktop"} {
		if !strings.Contains(why, want) {
			t.Errorf("the assistant's initialize got %q; want it to say %q", why, want)
		}
	}

	os.Unsetenv("DOCKER_HOST") // Docker answers now
	tapIn(t, win, "Try again")
	engine := a.window(t, 1)
	testwait.Eventually(t, 60*time.Second, "the engine's window", func() bool { return engine.shows("No sandboxes yet") })
	if why := initializeThroughShim(t); why != "" {
		t.Errorf("initialize once the engine runs: %s", why)
	}
	if out := callTool(t, mcpSession(t), "execute_command", map[string]any{"command": "echo ok"}); out["stdout"] != "ok\n" {
		t.Errorf("a call once the engine runs: %v", out)
	}
	quit()
	if err := <-ran; err != nil {
		t.Errorf("the app ended with %v", err)
	}
}

// TestBadConfigKeyOpensAWindowWithTheLine replays a config.toml with a key
// the engine does not know: the app used to exit with the reason on
// stderr. Now its window shows the file with the line at fault, the key
// meant, and Open in editor; the assistant's initialize gets the same;
// fixed, Try again starts the engine.
func TestBadConfigKeyOpensAWindowWithTheLine(t *testing.T) {
	opts := testOptions(t)
	good, _ := os.ReadFile(opts.ConfigPath)
	os.WriteFile(opts.ConfigPath, append(good, []byte("[limits]\nmemory = 512\n")...), 0o600)
	var apps atomic.Int32
	ctx, quit := context.WithCancel(context.Background())
	defer quit()
	ran := make(chan error, 1)
	made := make(chan *blockingApp, 1)
	newApp := newBlockingApp(t, &apps)
	go func() {
		ran <- RunApp(ctx, func() fyne.App { a := newApp(); made <- a.(*blockingApp); return a }, opts)
	}()
	var a *blockingApp
	select {
	case a = <-made:
	case err := <-ran:
		t.Fatalf("the app ended without a window: %v", err)
	}
	win := a.main(t)
	testwait.Eventually(t, 30*time.Second, "the window to show the config's line", func() bool {
		return win.shows("its config file has an error") && win.shows(`"limits.memory" is not a setting: did you mean limits.memory_mb?`) &&
			win.shows("→ ") && win.shows("memory = 512")
	})
	why := initializeThroughShim(t)
	for _, want := range []string{`unknown key "limits.memory"`, "Did you mean limits.memory_mb?", "fix config.toml"} {
		if !strings.Contains(why, want) {
			t.Errorf("the assistant's initialize got %q; want it to say %q", why, want)
		}
	}
	os.WriteFile(opts.ConfigPath, append(good, []byte("[limits]\nmemory_mb = 512\n")...), 0o600)
	tapIn(t, win, "Try again")
	engine := a.window(t, 1)
	testwait.Eventually(t, 60*time.Second, "the engine's window", func() bool { return engine.shows("No sandboxes yet") })
	quit()
	if err := <-ran; err != nil {
		t.Errorf("the app ended with %v", err)
	}
}
