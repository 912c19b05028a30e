package ui_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/mcpserver"
	"github.com/sandtray/sandtray/ui"

	"github.com/sandtray/sandtray/test/dockertest"
)

// TestEndToEndWithRealEngine: a sandbox created through MCP appears in the
// GUI's list, its activity shows the command it ran, Kill stops it and
// Delete (confirmed) removes it — against the real engine and Docker.
func TestEndToEndWithRealEngine(t *testing.T) {
	eng := realEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	model := mcpClient(t, ctx, eng)

	q := &queue{}
	u := ui.New(test.NewTempApp(t), host.WindowClient(ctx, eng), ui.Options{SocketPath: "/tmp/e2e.sock", Quit: func(bool) {}})
	u.DispatchForTest(q.add)
	go u.Run(ctx)
	win := u.Window()

	callTool(t, model, "create_sandbox", map[string]any{"name": "gui-e2e"})
	callTool(t, model, "execute_command", map[string]any{"sandbox_id": "gui-e2e", "command": "echo hello-from-mcp"})
	q.until(t, "the sandbox in the list", func() bool { return hasText(win, "gui-e2e") })
	if hasText(win, "echo hello-from-mcp") {
		t.Fatal("the activity shows before the sandbox is selected: the text finder sees too much")
	}
	u.SelectRowForTest(0)
	q.until(t, "the command in its activity", func() bool { return hasText(win, "echo hello-from-mcp") })

	test.Tap(button(t, win, "Kill"))
	q.until(t, "the sandbox stopped", func() bool { return status(t, eng, "gui-e2e") == sandbox.StatusStopped })
	test.Tap(button(t, win, "Delete…"))
	q.flush()
	test.Tap(button(t, win, "Delete"))
	q.until(t, "the sandbox gone from engine and list", func() bool {
		l, _ := eng.List(ctx)
		return len(l) == 0 && !hasText(win, "gui-e2e")
	})
}

func realEngine(t *testing.T, configure ...func(*config.Config)) *engine.Engine {
	t.Helper()
	image, labels := dockertest.Image(t), dockertest.Labels(t)
	cfg := config.Default()
	cfg.DefaultImage, cfg.StateDir, cfg.Host.AllowedRoots = image, t.TempDir(), []string{t.TempDir()}
	for _, c := range configure {
		c(&cfg)
	}
	eng, err := engine.New(context.Background(), cfg, engine.Options{Labels: labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng
}

// mcpClient connects the independent go-sdk client to the real MCP server
// over an in-memory connection, as a model's client would over the socket.
func mcpClient(t *testing.T, ctx context.Context, eng *engine.Engine) *mcp.ClientSession {
	t.Helper()
	srv := mcpserver.New(eng, mcpserver.Options{Languages: engine.Languages(), LanguageAliases: engine.LanguageAliases()})
	server, client := net.Pipe()
	go srv.ServeConn(ctx, server)
	s, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-model", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: client, Writer: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
}

func status(t *testing.T, eng *engine.Engine, ref string) sandbox.Status {
	info, err := eng.Get(context.Background(), ref)
	if err != nil {
		return sandbox.StatusMissing
	}
	return info.Status
}

// queue runs the UI's Fyne-goroutine and background work on the test's
// goroutine, like Fyne's own event loop would, one piece at a time.
type queue struct {
	mu    sync.Mutex
	items []func()
}

func (q *queue) add(f func()) {
	q.mu.Lock()
	q.items = append(q.items, f)
	q.mu.Unlock()
}

func (q *queue) flush() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.mu.Unlock()
			return
		}
		f := q.items[0]
		q.items = q.items[1:]
		q.mu.Unlock()
		f()
	}
}

func (q *queue) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for q.flush(); !cond(); q.flush() {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// walk visits every object drawn in the window and its overlays (dialogs).
func walk(w fyne.Window, visit func(fyne.CanvasObject)) {
	var rec func(o fyne.CanvasObject)
	rec = func(o fyne.CanvasObject) {
		if o == nil || !o.Visible() {
			return
		}
		visit(o)
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				rec(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				rec(c)
			}
		}
	}
	rec(w.Canvas().Content())
	for _, o := range w.Canvas().Overlays().List() {
		rec(o)
	}
}

func hasText(w fyne.Window, s string) bool {
	found := false
	walk(w, func(o fyne.CanvasObject) {
		if t, ok := o.(*canvas.Text); ok && strings.Contains(t.Text, s) {
			found = true
		}
	})
	return found
}

// button finds the visible button labelled text; the topmost one (a dialog's) wins.
func button(t *testing.T, w fyne.Window, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	walk(w, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == text {
			found = b
		}
	})
	if found == nil {
		t.Fatalf("no button %q on screen", text)
	}
	return found
}
