package ui

import (
	"context"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/layout"
)

// mainMenu is the window's menu bar: the desktop features, Start at login
// (also here: a desktop without a tray host shows no tray menu) and Quit
// (with its confirmation: without an IsQuit item Fyne would add one that
// quits at once). Other features add menus with addMenu.
func (u *UI) mainMenu() *fyne.MainMenu {
	quit := fyne.NewMenuItem("Quit Sandtray…", u.confirmQuit)
	quit.IsQuit = true
	// What the tray menu does, for desktops without a tray.
	items := []*fyne.MenuItem{fyne.NewMenuItem("Background jobs…", u.showAllJobs),
		fyne.NewMenuItem("Stop all ephemeral sandboxes", u.tray.stopEphemeral), u.tray.windowPause, fyne.NewMenuItemSeparator()}
	items = append(items, u.desktopItems()...)
	if u.tray.login != nil {
		items = append(items, u.tray.login.item)
	}
	items = append(items, fyne.NewMenuItemSeparator(), quit)
	return fyne.NewMainMenu(fyne.NewMenu("Sandtray", items...))
}

// addMenu appends a menu to the window's menu bar (e.g. Help).
func (u *UI) addMenu(m *fyne.Menu) {
	menu := u.win.MainMenu()
	menu.Items = append(menu.Items, m)
	u.setMainMenu(menu)
}

// setMainMenu sets the window's menu bar, its actions guarded first (a
// desktop's own menu bar takes them as they are set).
func (u *UI) setMainMenu(m *fyne.MainMenu) {
	u.guardTree(m)
	u.win.SetMainMenu(m)
}

// desktopItems are the menu items of the optional desktop features, shared
// by the tray menu and the menu bar.
func (u *UI) desktopItems() []*fyne.MenuItem {
	var items []*fyne.MenuItem
	if u.opts.Clients != nil {
		items = append(items, fyne.NewMenuItem("Connect assistants…", u.showClients))
	}
	if u.opts.Settings != nil {
		items = append(items, fyne.NewMenuItem("Settings…", u.showSettings))
	}
	return items
}

// layoutSpacer pushes what follows it in a box to the far end.
func layoutSpacer() fyne.CanvasObject { return layout.NewSpacer() }

// loginItem is the tray's "Start at login" check item.
type loginItem struct {
	u    *UI
	item *fyne.MenuItem
}

func newLoginItem(u *UI) *loginItem {
	l := &loginItem{u: u}
	l.item = fyne.NewMenuItem("Start at login", l.toggle)
	if on, err := u.opts.Autostart.Enabled(); err == nil {
		l.item.Checked = on
	}
	return l
}

// autostartPoll is how often the check mark is read again from the
// autostart entry: `sandtray autostart enable|disable`, or a person
// deleting the file, shows within this long (Fyne tells nothing when a
// menu opens, so there is no moment to read it then).
const autostartPoll = 3 * time.Second

// watch reads the entry now and then every autostartPoll, until ctx is
// done; a change redraws the menus.
func (l *loginItem) watch(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	var on bool
	l.u.background(func(context.Context) (err error) {
		on, err = l.u.opts.Autostart.Enabled()
		return err
	}, func(err error) {
		if err == nil && on != l.item.Checked {
			l.item.Checked = on
			l.u.tray.refreshMenu()
		}
		l.u.after(autostartPoll, func() { l.watch(ctx) })
	})
}

// toggle turns starting at login on or off, off Fyne's goroutine, and
// shows the outcome in the check mark (and a notice when it failed).
func (l *loginItem) toggle() {
	want := !l.item.Checked
	l.u.background(func(context.Context) error {
		return l.u.opts.Autostart.SetEnabled(want)
	}, func(err error) {
		if err != nil {
			l.u.notify("Sandtray", "Could not change Start at login: "+err.Error())
		} else {
			l.item.Checked = want
		}
		if on, err := l.u.opts.Autostart.Enabled(); err == nil {
			l.item.Checked = on
		}
		l.u.tray.refreshMenu()
		if menu := l.u.win.MainMenu(); menu != nil {
			menu.Refresh()
		}
	})
}

// ShowClients opens the Clients window ("Connect assistants…").
func (u *UI) ShowClients() { u.showClients() }

// ShowSettings opens the Settings window.
func (u *UI) ShowSettings() { u.showSettings() }

// TrayMenu is the system tray's menu, as the tray shows it.
func (u *UI) TrayMenu() *fyne.Menu { return u.tray.menu }
