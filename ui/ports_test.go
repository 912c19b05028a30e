package ui

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// GPUStatus makes the test backend a gpuReporter on a host without GPUs.
func (f *fakeBackend) GPUStatus(ctx context.Context) sandbox.GPUStatus {
	f.record("GPUStatus")
	return sandbox.GPUStatus{Detail: "no nvidia runtime; install the NVIDIA Container Toolkit"}
}

func TestGPUText(t *testing.T) {
	none, yes := sandbox.GPUStatus{Detail: "install the toolkit"}, sandbox.GPUStatus{Available: true, Method: "nvidia"}
	tests := []struct {
		gpus  string
		host  sandbox.GPUStatus
		known bool
		want  string
	}{
		{"", none, false, "None"},
		{"all", yes, true, "All of the host's GPUs · this Docker host has GPUs (nvidia)"},
		{"1", yes, true, "1 GPU · this Docker host has GPUs (nvidia)"},
		{"2", none, true, "2 GPUs · no GPUs on this Docker host: install the toolkit"},
		{"0", none, true, "None · no GPUs on this Docker host: install the toolkit"},
	}
	for _, tc := range tests {
		if got := GPUText(sandbox.Spec{GPUs: tc.gpus}, tc.host, tc.known); got != tc.want {
			t.Errorf("GPUText(%q, %+v, %v) = %q, want %q", tc.gpus, tc.host, tc.known, got, tc.want)
		}
	}
}

func TestDetailsShowPortsWithOpenAndCopy(t *testing.T) {
	box := alpha
	box.Ports = []sandbox.PortForward{{Port: 8000, HostPort: 41234, URL: "http://127.0.0.1:41234/"}}
	gpuBox := beta
	gpuBox.Spec.GPUs = "all"
	h := newHarness(t)
	h.feed(snapshot(box, gpuBox))
	h.selectRow(0)
	selectTab(h, "Details")
	h.flush() // the GPU question the Details tab asked, and the refresh after it

	ports := h.u.detail.info.ports.object()
	button(t, ports, "Copy").OnTapped()
	if got := h.u.app.Clipboard().Content(); got != "http://127.0.0.1:41234/" {
		t.Errorf("Copy put %q on the clipboard, want the URL", got)
	}
	button(t, ports, "Open").OnTapped()
	if got := h.u.detail.message.label.Text; got != "Opened http://127.0.0.1:41234/ in the default browser." {
		t.Errorf("after Open the message is %q", got)
	}
	if !strings.Contains(allText(ports), "8000 → http://127.0.0.1:41234/") {
		t.Errorf("the Ports row shows %q, want the forward", allText(ports))
	}
	gpus := h.u.detail.info.values["GPUs"].Text
	for _, want := range []string{"None", "no GPUs on this Docker host", "Holding GPUs: beta (all)"} {
		if !strings.Contains(gpus, want) {
			t.Errorf("GPUs row %q does not say %q", gpus, want)
		}
	}

	box.Ports = nil // unexposed: the row says so
	h.feed(snapshot(box, gpuBox))
	if got := allText(h.u.detail.info.ports.object()); !strings.Contains(got, "None.") {
		t.Errorf("after the forward ended the Ports row shows %q", got)
	}
}

// allText joins the text of every label o shows.
func allText(o fyne.CanvasObject) string {
	var parts []string
	for _, obj := range test.LaidOutObjects(o) {
		if l, ok := obj.(*widget.Label); ok {
			parts = append(parts, l.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestOpenWithoutABrowserCopiesTheURL: where the desktop cannot open a URL
// (no xdg-open), Open copies it and says so, as a warning, not a success.
func TestOpenWithoutABrowserCopiesTheURL(t *testing.T) {
	h := selected(t, alpha)
	h.u.openURL = func(*url.URL) error { return errors.New(`exec: "xdg-open": executable file not found in $PATH`) }
	selectTab(h, "Details")
	h.u.detail.info.ports.open("http://127.0.0.1:41234/")
	msg := h.u.detail.message.label
	if msg.Importance != widget.WarningImportance || !strings.Contains(msg.Text, "copied “http://127.0.0.1:41234/” to the clipboard") {
		t.Errorf("message %q (importance %d)", msg.Text, msg.Importance)
	}
	if got := h.u.app.Clipboard().Content(); got != "http://127.0.0.1:41234/" {
		t.Errorf("clipboard %q", got)
	}
}

// TestFilteredOutSandboxLeavesTheDetailPane: a filter that hides the
// selected sandbox empties the detail pane.
func TestFilteredOutSandboxLeavesTheDetailPane(t *testing.T) {
	h := selected(t, alpha)
	h.u.list.query.SetText("beta")
	h.flush()
	if h.u.m.selected != "" || h.u.detail.body.Visible() {
		t.Errorf("a filtered-out sandbox stays in the detail pane (selected %q)", h.u.m.selected)
	}
}
