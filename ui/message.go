package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// messageKind is what a status message reports, which picks its colour: a
// failure is never shown in a success's green.
type messageKind int

const (
	kindInfo    messageKind = iota // under way, or a plain fact: the text colour
	kindSuccess                    // done: green
	kindWarning                    // done, with something to know: amber
	kindError                      // failed: red
)

// How long a message stays: one that reports progress or success goes
// after a while, one that reports a failure stays longer, so it can be
// read; any message goes when the next one comes or its subject changes.
const (
	messageLife      = 10 * time.Second
	errorMessageLife = 60 * time.Second
)

// MessageImportance is the label importance a kind of message is drawn in.
func MessageImportance(k messageKind) widget.Importance {
	switch k {
	case kindSuccess:
		return widget.SuccessImportance
	case kindWarning:
		return widget.WarningImportance
	case kindError:
		return widget.DangerImportance
	}
	return widget.MediumImportance
}

// statusMessage is a line for the outcome of an action.
type statusMessage struct {
	u     *UI
	label *widget.Label
	gen   int // bumped by every show and clear: an older timer finds it changed
	kind  messageKind
	// onClear, when set, runs when a shown message is cleared (the status
	// bar shows the socket path again).
	onClear func()
}

func newStatusMessage(u *UI) *statusMessage {
	m := &statusMessage{u: u, label: widget.NewLabel("")}
	m.label.Wrapping = fyne.TextWrapWord
	m.label.Hide()
	return m
}

// show replaces the message with text of kind k, and clears it when it is
// stale.
func (m *statusMessage) show(text string, k messageKind) {
	m.gen++
	m.kind = k
	m.label.Importance = MessageImportance(k)
	m.label.SetText(text)
	m.label.Show()
	life := messageLife
	if k == kindError {
		life = errorMessageLife
	}
	gen := m.gen
	m.u.after(life, func() {
		if m.gen == gen {
			m.clear()
		}
	})
}

// clear hides the message.
func (m *statusMessage) clear() {
	m.gen++
	if m.label.Visible() || m.label.Text != "" {
		m.label.SetText("")
		m.label.Hide()
		if m.onClear != nil {
			m.onClear()
		}
	}
}
