package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// noTrayNoticeSeen is the preference that remembers the no-tray notice was
// read: it is shown once, not at every start.
const noTrayNoticeSeen = "noTrayNoticeSeen"

// NoTrayText is the notice a desktop without a tray gets: why, and how the
// window stays reachable. attached says the window is on an engine that
// runs without it (started by an assistant), which quitting leaves running.
func NoTrayText(why string, attached bool) string {
	if attached {
		return "No tray icon: " + why + ". Closing the window minimises it, and Quit Sandtray… in the Sandtray menu closes it; " +
			"the engine it shows was started by an assistant and keeps running for it."
	}
	return "No tray icon: " + why + ". Sandtray runs while its window is open or minimised: closing the window minimises it, " +
		"and Quit Sandtray… in the Sandtray menu ends it."
}

// noTrayBanner is the notice above the list, with "Got it".
func (u *UI) noTrayBanner() fyne.CanvasObject {
	if u.opts.NoTray == "" || u.app.Preferences().Bool(noTrayNoticeSeen) {
		return nil
	}
	text := widget.NewLabel(NoTrayText(u.opts.NoTray, u.opts.Attached))
	text.Wrapping = fyne.TextWrapWord
	text.Importance = widget.WarningImportance
	var banner *fyne.Container
	ok := widget.NewButton("Got it", func() {
		u.app.Preferences().SetBool(noTrayNoticeSeen, true)
		banner.Hide()
	})
	banner = container.NewBorder(nil, widget.NewSeparator(), widget.NewIcon(theme.WarningIcon()), ok, text)
	u.noTray = banner
	return banner
}

// closeWithoutTray is what closing the window does when there is no tray
// to bring it back from: minimise it, or, where it cannot be minimised,
// ask whether to quit.
func (u *UI) closeWithoutTray() {
	if u.minimise() {
		return
	}
	u.confirmQuit()
}

// minimise asks the window manager to minimise the window (X11 only).
func (u *UI) minimise() bool {
	nw, ok := u.win.(driver.NativeWindow)
	if !ok || u.opts.Iconify == nil {
		return false
	}
	done := false
	nw.RunNative(func(ctx any) {
		if x, ok := ctx.(driver.X11WindowContext); ok && x.WindowHandle != 0 {
			done = u.opts.Iconify(x.WindowHandle)
		}
	})
	return done
}

// notify tells the person something happened: a desktop notification, or,
// where the desktop has no notification service, the status line.
func (u *UI) notify(title, body string) {
	if u.opts.NoNotifications {
		u.status.showMessage(title+": "+body, kindWarning)
		return
	}
	u.opts.Notify(title, body)
}
