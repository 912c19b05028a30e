package ui

import (
	"context"

	"testing"

	"fyne.io/fyne/v2/widget"
)

// TestMessagesAreColouredByKindAndGoWhenStale: an action under way is told
// in the text colour, its success in green, its failure in red (never
// green); a success goes after messageLife, a failure after
// errorMessageLife; the status bar's socket path comes back then.
func TestMessagesAreColouredByKindAndGoWhenStale(t *testing.T) {
	h := selected(t, alpha)
	msg := h.u.detail.message.label
	h.u.act("Stop alpha", func(context.Context) error { return nil }, "Stopped alpha.")
	if msg.Text != "Stop alpha…" || msg.Importance != widget.MediumImportance {
		t.Errorf("under way: %q in importance %d; want the text colour", msg.Text, msg.Importance)
	}
	h.flush()
	if msg.Text != "Stopped alpha." || msg.Importance != widget.SuccessImportance {
		t.Errorf("done: %q in importance %d; want green", msg.Text, msg.Importance)
	}
	h.fire(messageLife)
	if msg.Visible() {
		t.Errorf("a success still shows after %s", messageLife)
	}
	h.u.act("Stop alpha", func(context.Context) error { return errBoom }, "Stopped alpha.")
	h.flush()
	if msg.Text != "Stop alpha: docker said no" || msg.Importance != widget.DangerImportance {
		t.Errorf("failed: %q in importance %d; want red", msg.Text, msg.Importance)
	}
	h.fire(messageLife)
	if !msg.Visible() {
		t.Error("a failure went as soon as a success would")
	}
	h.fire(errorMessageLife)
	if msg.Visible() {
		t.Errorf("a failure still shows after %s", errorMessageLife)
	}

	h.u.status.showMessage("Stopped all ephemeral sandboxes.", kindSuccess)
	if h.u.status.socket.Visible() {
		t.Error("the socket path shows under the message")
	}
	h.fire(messageLife)
	if h.u.status.message.label.Visible() || !h.u.status.socket.Visible() {
		t.Error("the socket path did not come back when the message went")
	}
}
