package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// ClientStatusText is what the Clients window says about a client, and how
// loudly.
func ClientStatusText(c ClientState) (string, widget.Importance) {
	switch {
	case c.Problem != "":
		return c.Problem, widget.DangerImportance
	case c.Connected && !c.Current:
		return "Connected to another sandtray-mcp: Connect points it at this one", widget.WarningImportance
	case c.Connected:
		return "Connected", widget.SuccessImportance
	case !c.Installed:
		return "Not found on this computer", widget.WarningImportance
	}
	return "Not connected", widget.MediumImportance
}

// anyConnected reports whether some client has Sandtray in its config.
func anyConnected(states []ClientState) bool {
	for _, c := range states {
		if c.Connected {
			return true
		}
	}
	return false
}

// clientsWindow is the Clients window: each MCP client, whether it is
// installed and connected, its config file, and Connect / Disconnect.
type clientsWindow struct {
	u       *UI
	win     fyne.Window
	rows    *fyne.Container
	message *widget.Label
	states  []ClientState
}

// showClients opens the Clients window (one at a time) with fresh states.
func (u *UI) showClients() {
	if u.opts.Clients == nil {
		return
	}
	if u.clients == nil {
		u.clients = newClientsWindow(u)
	}
	u.clients.reload()
	u.clients.win.Show()
	u.clients.win.RequestFocus()
}

func newClientsWindow(u *UI) *clientsWindow {
	c := &clientsWindow{u: u, rows: container.NewVBox(), message: widget.NewLabel("")}
	c.win = u.app.NewWindow("Connect assistants")
	c.message.Wrapping = fyne.TextWrapWord
	c.message.Hide()
	intro := widget.NewLabel("Connect adds Sandtray to the assistant's MCP settings (a backup of the file is kept " +
		"next to it) and Disconnect removes only Sandtray's entry. Restart the assistant afterwards.")
	intro.Wrapping = fyne.TextWrapWord
	closeBtn := widget.NewButton("Close", c.win.Hide)
	c.win.SetContent(container.NewBorder(intro, container.NewVBox(c.message, container.NewHBox(layoutSpacer(), closeBtn)),
		nil, nil, container.NewVScroll(c.rows)))
	c.win.Resize(fyne.NewSize(720, 460))
	c.win.SetCloseIntercept(u.guard("closing the Clients window", c.win.Hide))
	return c
}

// reload reads every client's state and rebuilds the rows.
func (c *clientsWindow) reload() {
	c.states = c.u.opts.Clients.List()
	c.rows.RemoveAll()
	for i, st := range c.states {
		if i > 0 {
			c.rows.Add(widget.NewSeparator())
		}
		c.rows.Add(c.row(st))
	}
	c.rows.Refresh()
	c.u.list.clientsChanged(anyConnected(c.states))
}

// row is one client: name and status, config path, and its button.
func (c *clientsWindow) row(st ClientState) fyne.CanvasObject {
	name := widget.NewLabelWithStyle(st.App, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	text, importance := ClientStatusText(st)
	status := widget.NewLabel(text)
	status.Importance = importance
	status.Wrapping = fyne.TextWrapWord
	path := widget.NewLabel(st.Path)
	path.TextStyle.Monospace = true
	path.Truncation = fyne.TextTruncateEllipsis
	path.Selectable = true
	var btn *widget.Button
	if st.Connected && st.Current {
		btn = widget.NewButtonWithIcon("Disconnect", theme.ContentRemoveIcon(), func() { c.run(st, false) })
	} else {
		btn = widget.NewButtonWithIcon("Connect", theme.ContentAddIcon(), func() { c.run(st, true) })
		btn.Importance = widget.HighImportance
	}
	head := container.NewBorder(nil, nil, name, nil, status)
	return container.NewBorder(nil, nil, nil, container.NewCenter(btn), container.NewVBox(head, path))
}

// run connects or disconnects a client off Fyne's goroutine, then shows
// the outcome and the new states.
func (c *clientsWindow) run(st ClientState, connect bool) {
	var msg string
	c.u.background(func(context.Context) (err error) {
		if connect {
			msg, err = c.u.opts.Clients.Connect(st.Name)
		} else {
			msg, err = c.u.opts.Clients.Disconnect(st.Name)
		}
		return err
	}, func(err error) {
		c.reload()
		c.message.Importance = widget.SuccessImportance
		if err != nil {
			c.message.Importance = widget.DangerImportance
			msg = err.Error()
		}
		c.message.SetText(msg)
		c.message.Show()
	})
}
