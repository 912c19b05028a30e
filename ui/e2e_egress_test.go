package ui_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/ui"
)

// The app's Backend is the control protocol's client: without these
// methods the app would silently show no dialog and no Network tab.
var _ ui.Egress = (*control.GUIClient)(nil)

// mirror is a host this machine resolves (the gate resolves every host
// before it asks about it): the Debian mirror of the sandbox image.
const mirror = "deb.debian.org"

// TestEgressApprovalWithRealEngine: a model's request_network shows in the
// app's dialog; its answer reaches the engine's gate; an answer from the
// command line closes the dialog; the Network tab shows the rule the answer
// added and takes it back — against the real engine and Docker.
func TestEgressApprovalWithRealEngine(t *testing.T) {
	eng := realEngine(t, func(c *config.Config) {
		c.Egress.Ask = true
		c.Egress.Allow = []string{} // nothing allowed: every host is asked about
		c.Egress.AskTimeout = config.Duration{Duration: time.Minute}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	model := mcpClient(t, ctx, eng)

	q := &queue{}
	u := ui.New(test.NewTempApp(t), host.WindowClient(ctx, eng), ui.Options{SocketPath: "/tmp/e2e.sock", Quit: func(bool) {}})
	u.DispatchForTest(q.add)
	go u.Run(ctx)
	win := u.Window()
	dialogShows := func() bool { return win.Canvas().Overlays().Top() != nil }

	callTool(t, model, "create_sandbox", map[string]any{"name": "gui-egress", "network": "egress"})
	asked := time.Now()
	callTool(t, model, "request_network", map[string]any{"sandbox_id": "gui-egress", "hosts": []string{mirror}, "reason": "pip install requests"})
	defer func() {
		if t.Failed() {
			walk(win, func(o fyne.CanvasObject) {
				if tx, ok := o.(*canvas.Text); ok {
					t.Log(tx.Text)
				}
			})
			t.Logf("pending %+v", eng.EgressPending())
		}
	}()
	q.until(t, "the request in a dialog", func() bool {
		return dialogShows() && hasText(win, mirror+":443") && hasText(win, "“pip install requests”") && hasText(win, "e2e-model 1")
	})
	t.Logf("the dialog showed %s after request_network was called", time.Since(asked).Round(time.Millisecond))
	q.until(t, "the dialog's buttons armed", func() bool { return !button(t, win, "Allow once").Disabled() })
	test.Tap(button(t, win, "Allow always for this sandbox"))
	rules := func() sandbox.EgressRules {
		n, err := eng.EgressNetwork(ctx, "gui-egress")
		if err != nil {
			t.Fatal(err)
		}
		return n.Rules
	}
	q.until(t, "the answer on the gate and the dialog closed", func() bool {
		return slices.Equal(rules().Allow, []string{mirror}) && len(eng.EgressPending()) == 0 && !dialogShows()
	})

	// `sandtray egress deny` answers the next one while its dialog shows,
	// through the engine's control endpoint as the command does.
	callTool(t, model, "request_network", map[string]any{"sandbox_id": "gui-egress", "hosts": []string{mirror + ":8080"}, "reason": "a port no rule names"})
	q.until(t, "the second request in a dialog", func() bool { return dialogShows() && hasText(win, mirror+":8080") })
	if _, err := controlClient(t, ctx, eng).AnswerHost(ctx, "gui-egress", mirror+":8080", sandbox.EgressDeny); err != nil {
		t.Fatal(err)
	}
	q.until(t, "the dialog closed by the command line's answer", func() bool { return !dialogShows() })

	// The Network tab lists the rule; Remove takes it off the gate.
	u.SelectRowForTest(0)
	u.SelectTabForTest("Network")
	q.until(t, "the rule in the Network tab", func() bool { return hasText(win, "Network: egress.") && hasText(win, mirror) })
	test.Tap(button(t, win, "Remove"))
	q.until(t, "the rule gone from the gate", func() bool { return len(rules().Allow) == 0 })

	// A rule added in the tab, without a request, reaches the gate.
	q.flush()
	for _, o := range test.LaidOutObjects(win.Content()) {
		if e, ok := o.(*widget.Entry); ok && e.PlaceHolder == "host or host:port, such as pypi.org" {
			e.SetText(mirror)
		}
	}
	test.Tap(button(t, win, "Allow"))
	q.until(t, "the tab's rule on the gate", func() bool { return slices.Contains(rules().Allow, mirror) })
}

// controlClient serves the engine's control endpoint on a socket of the
// test's and connects to it, as `sandtray egress` does.
func controlClient(t *testing.T, ctx context.Context, eng *engine.Engine) *control.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctl") // short: a socket's path has a limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "control.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go control.NewServer(host.ControlBackend(eng), nil).Serve(ctx, ln)
	conn, err := net.Dial("unix", filepath.Join(dir, "control.sock"))
	if err != nil {
		t.Fatal(err)
	}
	c := control.NewClient(conn)
	t.Cleanup(func() { c.Close() })
	return c
}
