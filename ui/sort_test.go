package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestListSortsByAnyColumn: a header click sorts the list by its column,
// a second click the other way round, with an arrow on that header; the
// selection stays on its sandbox; Ports shows a forward's URL and sorts
// those with one first.
func TestListSortsByAnyColumn(t *testing.T) {
	h := newHarness(t)
	served := gamma
	served.Ports = []sandbox.PortForward{{Port: 8000, HostPort: 41234, URL: "http://127.0.0.1:41234/"},
		{Port: 9000, HostPort: 41235, URL: "http://127.0.0.1:41235/"}}
	h.feed(snapshot(alpha, beta, served))
	if got := h.names(); !cmp.Equal(got, []string{"gamma", "alpha", "beta"}) {
		t.Errorf("default order %v; want the newest first", got)
	}
	h.selectRow(h.u.m.indexOf(alpha.ID))
	header := func(title string) int {
		for i, c := range listColumns {
			if c.title == title {
				return i
			}
		}
		t.Fatalf("no column %s", title)
		return -1
	}
	tap := func(title string) {
		test.Tap(h.u.list.headers[header(title)])
		h.flush()
	}
	tap("Name")
	if got := h.names(); !cmp.Equal(got, []string{"alpha", "beta", "gamma"}) || h.u.list.headers[header("Name")].Text != "Name ▲" {
		t.Errorf("by name: %v, header %q", got, h.u.list.headers[header("Name")].Text)
	}
	tap("Name")
	if got := h.names(); !cmp.Equal(got, []string{"gamma", "beta", "alpha"}) || h.u.list.headers[header("Name")].Text != "Name ▼" {
		t.Errorf("by name, the other way: %v", got)
	}
	if h.u.m.selected != alpha.ID || h.u.list.list.Length() != 3 {
		t.Errorf("the selection moved off alpha: %q", h.u.m.selected)
	}
	tap("Memory")
	if got := h.names(); got[2] != "alpha" && got[2] != "gamma" || got[0] != "beta" {
		t.Errorf("by memory: %v; want the stopped one (no memory) first", got)
	}
	tap("Ports")
	if got := h.names(); got[0] != "gamma" || h.u.list.headers[header("Name")].Text != "Name" {
		t.Errorf("by ports: %v; want the one with a forward first, and the arrow moved", got)
	}
	if got := rowTexts(served, t0)[header("Ports")]; got != "http://127.0.0.1:41234/ (+1)" {
		t.Errorf("Ports cell %q", got)
	}
	h.u.list.query.SetText("41234")
	h.flush()
	if got := h.names(); !cmp.Equal(got, []string{"gamma"}) {
		t.Errorf("filtering by a forwarded URL: %v", got)
	}
}

// TestOwnerNameIsTheClient: the Owner column shows the client's name, not
// its version or the session id.
func TestOwnerNameIsTheClient(t *testing.T) {
	for in, want := range map[sandbox.Owner]string{
		{Client: "Claude Code 2.0.14", Session: "DKR5YDW3TEJZ"}: "Claude Code",
		{Client: "claude-ai 0.1.0"}:                             "claude-ai",
		{Client: "cursor v1.7"}:                                 "cursor",
		{Client: "Sandtray app"}:                                "Sandtray app",
		{Session: "DKR5YDW3TEJZQQ"}:                             "session DKR5YDW3TEJZ",
		{}:                                                      "—",
	} {
		if got := OwnerName(in); got != want {
			t.Errorf("OwnerName(%+v) = %q; want %q", in, got, want)
		}
	}
}

// TestDetailsPutForwardsFirstAndGPUsOnlyWhereTheyMatter: the Details tab's
// first row is Ports; the GPUs row shows only when a sandbox holds GPUs or
// the Docker host has some, not on every host without them.
func TestDetailsPutForwardsFirstAndGPUsOnlyWhereTheyMatter(t *testing.T) {
	if infoFields[0] != "Ports" {
		t.Errorf("the Details rows start with %s", infoFields[0])
	}
	h := selected(t, alpha)
	selectTab(h, "Details")
	h.flush() // the GPU answer: a host without GPUs
	selectTab(h, "Details")
	tab := h.u.detail.info
	if tab.keys["GPUs"].Visible() {
		t.Errorf("a GPUs row on a host without GPUs, for a sandbox without: %q", tab.values["GPUs"].Text)
	}
	holder := beta
	holder.Spec.GPUs = "all"
	h.feed(snapshot(alpha, holder))
	selectTab(h, "Details")
	if !tab.keys["GPUs"].Visible() || !contains(tab.values["GPUs"].Text, "Holding GPUs: beta (all)") {
		t.Errorf("with a sandbox holding GPUs: row shown %t, %q", tab.keys["GPUs"].Visible(), tab.values["GPUs"].Text)
	}
}
