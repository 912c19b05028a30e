package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// tempClients is Clients over the real app/install code in a temporary home.
type tempClients struct{ home, shim string }

func (c tempClients) opts() install.Options {
	return install.Options{Home: c.home, ShimPath: c.shim, GOOS: "linux"}
}

func (c tempClients) List() []ClientState {
	var out []ClientState
	for _, s := range install.Inspect(c.opts()) {
		st := ClientState{Name: s.Client, App: s.App, Path: s.Path, Installed: s.Installed,
			Connected: s.Connected, Current: s.Current}
		if s.Err != nil {
			st.Problem = s.Err.Error()
		}
		out = append(out, st)
	}
	return out
}

func (c tempClients) Connect(name string) (string, error) {
	res, err := install.Install(name, c.opts())
	return res.String(), err
}

func (c tempClients) Disconnect(name string) (string, error) {
	res, err := install.Uninstall(name, c.opts())
	return res.String(), err
}

// clientRow finds the row of a client's name in the Clients window and
// returns its status label and button.
func clientRow(t *testing.T, h *harness, app string) (*widget.Label, *widget.Button) {
	t.Helper()
	c := h.u.clients
	for i, st := range c.states {
		if st.App != app {
			continue
		}
		row := c.rows.Objects[2*i] // rows alternate with separators
		text, _ := ClientStatusText(st)
		status := find(t, row, func(l *widget.Label) bool { return l.Text == text })
		btn := find(t, row, func(*widget.Button) bool { return true })
		return status, btn
	}
	t.Fatalf("no row for %s", app)
	return nil, nil
}

func TestClientsWindowConnectsAndDisconnects(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700) // Claude Code is installed
	clients := tempClients{home: home, shim: "/opt/sandtray/sandtray-mcp"}
	h := newHarness(t, func(o *Options) { o.Clients = clients })
	h.feed(sandbox.Snapshot{})

	// The empty list offers to connect an assistant while none is.
	if !h.u.list.connect.Visible() {
		t.Fatal("no “Connect an assistant…” on the empty list with no client connected")
	}
	test.Tap(h.u.list.connect)
	h.flush()
	if h.u.clients == nil || !h.u.clients.win.Content().Visible() {
		t.Fatal("“Connect an assistant…” did not open the Clients window")
	}

	status, btn := clientRow(t, h, "Claude Code")
	if status.Text != "Not connected" || btn.Text != "Connect" {
		t.Errorf("Claude Code row = %q / %q, want Not connected / Connect", status.Text, btn.Text)
	}
	if s, _ := clientRow(t, h, "Cursor"); s.Text != "Not found on this computer" {
		t.Errorf("Cursor row = %q, want not found", s.Text)
	}

	test.Tap(btn)
	h.flush()
	config := filepath.Join(home, ".claude.json")
	data, err := os.ReadFile(config)
	if err != nil || !strings.Contains(string(data), `"command": "/opt/sandtray/sandtray-mcp"`) {
		t.Fatalf("Connect did not write the entry: %v\n%s", err, data)
	}
	if msg := h.u.clients.message.Text; !strings.Contains(msg, "Restart Claude Code") {
		t.Errorf("message after Connect = %q", msg)
	}
	status, btn = clientRow(t, h, "Claude Code")
	if status.Text != "Connected" || btn.Text != "Disconnect" {
		t.Errorf("after Connect: %q / %q, want Connected / Disconnect", status.Text, btn.Text)
	}
	if h.u.list.connect.Visible() {
		t.Error("“Connect an assistant…” still offered with Claude Code connected")
	}

	// Disconnect removes only Sandtray's entry, keeping a backup.
	os.WriteFile(config, []byte(`{"mcpServers": {"other": {"command": "x"}, "sandtray": {"command": "/opt/sandtray/sandtray-mcp"}}, "numStartups": 4}`), 0o600)
	test.Tap(btn)
	h.flush()
	data, _ = os.ReadFile(config)
	if strings.Contains(string(data), "sandtray") || !strings.Contains(string(data), `"other"`) || !strings.Contains(string(data), "numStartups") {
		t.Errorf("Disconnect left:\n%s", data)
	}
	if _, err := os.Stat(config + ".bak"); err != nil {
		t.Errorf("no backup after Disconnect: %v", err)
	}
	if status, _ := clientRow(t, h, "Claude Code"); status.Text != "Not connected" {
		t.Errorf("after Disconnect: %q", status.Text)
	}
	if !h.u.list.connect.Visible() {
		t.Error("“Connect an assistant…” not offered again after the last client was disconnected")
	}
}

func TestClientsWindowShowsABrokenConfig(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("{ // not JSON\n}"), 0o600)
	h := newHarness(t, func(o *Options) { o.Clients = tempClients{home: home, shim: "/opt/s/sandtray-mcp"} })
	h.u.showClients()
	status, btn := clientRow(t, h, "Cursor")
	if status.Importance != widget.DangerImportance || !strings.Contains(status.Text, "invalid JSON at line 1") {
		t.Errorf("Cursor row = %q (%v), want the JSON error in red", status.Text, status.Importance)
	}
	test.Tap(btn)
	h.flush()
	if msg := h.u.clients.message; msg.Importance != widget.DangerImportance || !strings.Contains(msg.Text, "not changed") {
		t.Errorf("Connect on a broken config says %q", msg.Text)
	}
	if data, _ := os.ReadFile(path); string(data) != "{ // not JSON\n}" {
		t.Errorf("the broken config was changed to %q", data)
	}
}

func TestConnectOfferHiddenWithoutClientsOrWithSessions(t *testing.T) {
	h := newHarness(t)
	h.feed(sandbox.Snapshot{})
	if h.u.list.connect.Visible() {
		t.Error("offered without Options.Clients")
	}
	h = newHarness(t, func(o *Options) { o.Clients = tempClients{home: t.TempDir(), shim: "/s"} })
	h.feed(sandbox.Snapshot{Sessions: 1})
	if h.u.list.connect.Visible() {
		t.Error("offered while an assistant is connected to the socket")
	}
	h.feed(snapshot(alpha))
	if h.u.list.connect.Visible() {
		t.Error("offered above a list with sandboxes")
	}
}
