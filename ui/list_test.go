package ui

import (
	"context"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func box(id, name string, st sandbox.Status, persistent bool, client string, age time.Duration) sandbox.Info {
	info := sandbox.Info{
		ID: id + "0123456789abcdef", Name: name, Image: "python:3.12-slim", Status: st, Persistent: persistent,
		Owner:     sandbox.Owner{Client: client, Session: "sess-" + id + "-0001"},
		CreatedAt: t0.Add(-age), LastUsed: t0.Add(-age / 2),
		Spec: sandbox.Spec{Name: name, Image: "python:3.12-slim", Network: "none", MemoryMB: 512, CPUs: 1,
			PidsLimit: 256, Workdir: "/workspace"},
	}
	if st == sandbox.StatusRunning {
		info.Stats = sandbox.Stats{CPUPercent: 12.5, MemoryBytes: 96 << 20, MemoryLimit: 512 << 20, Pids: 4}
	}
	return info
}

var (
	alpha = box("aaaa", "alpha", sandbox.StatusRunning, false, "claude-ai 0.1.0", 5*time.Minute)
	beta  = box("bbbb", "beta", sandbox.StatusStopped, true, "Cursor 1.7", 3*time.Hour)
	gamma = box("cccc", "gamma", sandbox.StatusRunning, false, "Claude Code 2.0", 30*time.Second)
)

func snapshot(boxes ...sandbox.Info) sandbox.Snapshot {
	return sandbox.Snapshot{Time: t0, Sandboxes: boxes, Sessions: 2,
		Docker: sandbox.DockerStatus{Connected: true, Version: "20.10.24 (API 1.41)", Host: "unix:///var/run/docker.sock"}}
}

// names lists the sandboxes the list shows, top to bottom.
func (h *harness) names() []string {
	var out []string
	for _, info := range h.u.m.visible {
		out = append(out, info.Name)
	}
	return out
}

// waitFor runs queued work until cond holds, failing after a few seconds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
		h.flush()
	}
}

func TestRunFollowsSnapshots(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.u.Run(ctx); close(done) }()

	h.b.snaps <- snapshot(alpha, beta)
	h.waitFor("two sandboxes", func() bool { return h.u.list.count.Text == "2 of 2" })
	if diff := cmp.Diff([]string{"alpha", "beta"}, h.names()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	stopped := alpha
	stopped.Status = sandbox.StatusStopped
	h.b.snaps <- snapshot(gamma, stopped)
	h.waitFor("gamma to appear and beta to vanish", func() bool { return h.u.list.count.Text == "2 of 2" && h.names()[0] == "gamma" })
	if got := h.u.m.visible[1].Status; got != sandbox.StatusStopped {
		t.Errorf("alpha's status = %s, want stopped", got)
	}
	if got := h.u.tray.count.Label; got != "1 sandbox running" {
		t.Errorf("tray count = %q", got)
	}

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

func TestRowTexts(t *testing.T) {
	want := []string{"alpha", "python:3.12-slim", "Running", "claude-ai", "Ephemeral", "5m", "12.5%", "96.0 MiB / 512 MiB", "—"}
	if diff := cmp.Diff(want, rowTexts(alpha, t0)); diff != "" {
		t.Errorf("running row (-want +got):\n%s", diff)
	}
	want = []string{"beta", "python:3.12-slim", "Stopped", "Cursor", "Persistent", "3h 0m", "—", "—", "—"}
	if diff := cmp.Diff(want, rowTexts(beta, t0)); diff != "" {
		t.Errorf("stopped row (-want +got):\n%s", diff)
	}
}

func TestFilterByTextAndStatus(t *testing.T) {
	h := newHarness(t)
	h.feed(snapshot(alpha, beta, gamma))
	if diff := cmp.Diff([]string{"gamma", "alpha", "beta"}, h.names()); diff != "" {
		t.Fatalf("newest first (-want +got):\n%s", diff)
	}
	tests := []struct {
		query, status string
		want          []string
	}{
		{"GAM", "All", []string{"gamma"}},
		{"cursor", "All", []string{"beta"}},
		{"cccc01", "All", []string{"gamma"}},
		{"", "Stopped", []string{"beta"}},
		{"", "Running", []string{"gamma", "alpha"}},
		{"alpha", "Stopped", nil},
		{"", "All", []string{"gamma", "alpha", "beta"}},
	}
	for _, tt := range tests {
		h.u.list.query.SetText("")
		test.Type(h.u.list.query, tt.query)
		h.u.list.status.SetSelected(tt.status)
		if diff := cmp.Diff(tt.want, h.names()); diff != "" {
			t.Errorf("filter %q/%s (-want +got):\n%s", tt.query, tt.status, diff)
		}
		if empty := len(tt.want) == 0; h.u.list.empty.Visible() != empty {
			t.Errorf("filter %q/%s: empty note visible = %t, want %t", tt.query, tt.status, !empty, empty)
		}
	}
}

func TestSelectionFollowsTheSandbox(t *testing.T) {
	h := newHarness(t)
	h.feed(snapshot(alpha, beta))
	h.selectRow(1) // beta
	if h.u.detail.title.Text != "beta" || !h.u.detail.body.Visible() {
		t.Fatalf("detail shows %q (visible %t), want beta", h.u.detail.title.Text, h.u.detail.body.Visible())
	}
	h.feed(snapshot(alpha, beta, gamma)) // gamma is newest: beta moves to row 2
	if got := h.u.m.indexOf(h.u.m.selected); got != 2 || h.u.detail.title.Text != "beta" {
		t.Errorf("after reorder: selected row %d, detail %q; want 2, beta", got, h.u.detail.title.Text)
	}
	h.feed(snapshot(alpha, gamma)) // beta is gone
	if h.u.m.selected != "" || h.u.detail.body.Visible() || !h.u.detail.none.Visible() {
		t.Errorf("after beta vanished: selected %q, detail visible %t", h.u.m.selected, h.u.detail.body.Visible())
	}
}

func TestNoticesNotifyOncePerNewNotice(t *testing.T) {
	h := newHarness(t)
	n1 := sandbox.Notice{Seq: 1, Title: "Sandbox killed", Body: "alpha ran out of memory (512 MiB)."}
	n2 := sandbox.Notice{Seq: 2, Title: "Command timed out", Body: "sleep 600 in beta was killed after 60 s."}
	n3 := sandbox.Notice{Seq: 3, Title: "Docker is back", Body: "Sandtray reconnected to Docker."}
	s := snapshot(alpha)
	s.Notices = []sandbox.Notice{n1, n2}
	h.feed(s)
	h.feed(s) // the same notices again: nothing new
	s.Notices = []sandbox.Notice{n2, n3}
	h.feed(s)
	want := []string{n1.Title + ": " + n1.Body, n2.Title + ": " + n2.Body, n3.Title + ": " + n3.Body}
	if diff := cmp.Diff(want, h.notices); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

func TestStatusLine(t *testing.T) {
	h := newHarness(t)
	s := snapshot(alpha)
	h.feed(s)
	if got := h.u.status.docker.Text; got != "Docker connected · 20.10.24 (API 1.41) · unix:///var/run/docker.sock" {
		t.Errorf("docker = %q", got)
	}
	if got := h.u.status.clients.Text; got != "2 MCP clients" {
		t.Errorf("clients = %q", got)
	}
	if got := h.u.status.socket.Text; got != "Socket /run/user/1000/sandtray/mcp.sock" {
		t.Errorf("socket = %q", got)
	}
	s.Docker = sandbox.DockerStatus{Error: "cannot reach /var/run/docker.sock; start Docker"}
	s.Paused = true
	h.feed(s)
	if got := h.u.status.docker.Text; got != "Docker disconnected: cannot reach /var/run/docker.sock; start Docker" {
		t.Errorf("docker = %q", got)
	}
	if !h.u.status.paused.Visible() || !h.u.tray.pause.Checked {
		t.Error("paused is not shown in the status line and the tray")
	}
}

// TestListRedrawsOnlyWhatChanged: a snapshot that changes nothing the list
// shows (here a figure below what it displays) redraws nothing; one that
// changes a shown figure redraws it.
func TestListRedrawsOnlyWhatChanged(t *testing.T) {
	h := newHarness(t)
	a := box("a", "alpha", sandbox.StatusRunning, false, "c", time.Hour)
	h.feed(snapshot(a))
	before := h.u.list.redraws
	a.Stats.CPUPercent += 0.001 // shown as 12.5% still
	a.Stats.MemoryBytes += 10
	h.feed(snapshot(a))
	if h.u.list.redraws != before {
		t.Errorf("an unchanged list was redrawn (%d redraws, was %d)", h.u.list.redraws, before)
	}
	a.Stats.CPUPercent = 40
	h.feed(snapshot(a))
	if h.u.list.redraws != before+1 {
		t.Errorf("a new CPU figure was not redrawn (%d redraws, was %d)", h.u.list.redraws, before)
	}
	if got := rowTexts(h.u.m.visible[0], t0)[6]; got != FormatPercent(40) {
		t.Errorf("CPU shown as %q", got)
	}
}
