package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/assets"
)

// Tray icons, one for light and one for dark desktop themes.
var (
	trayIconLight = fyne.NewStaticResource("sandtray-tray-light.png", assets.TrayLight)
	trayIconDark  = fyne.NewStaticResource("sandtray-tray-dark.png", assets.TrayDark)
)

// trayMenu is the system tray menu: how many sandboxes run, open the window,
// stop all ephemeral sandboxes, pause new sandboxes, quit.
type trayMenu struct {
	u     *UI
	menu  *fyne.Menu
	count *fyne.MenuItem
	pause *fyne.MenuItem
	// windowPause is Pause new sandboxes in the window's menu: its own item
	// (a menu item belongs to one menu), checked as the tray's is.
	windowPause *fyne.MenuItem
	desk        desktop.App // nil when the app has no system tray
	variant     fyne.ThemeVariant
	login       *loginItem // nil without Options.Autostart
}

func newTrayMenu(u *UI) *trayMenu {
	t := &trayMenu{u: u}
	t.count = fyne.NewMenuItem(RunningText(0), nil)
	t.count.Disabled = true
	open := fyne.NewMenuItem("Open Sandtray", u.ShowWindow)
	jobs := fyne.NewMenuItem("Background jobs…", u.showAllJobs)
	stopAll := fyne.NewMenuItem("Stop all ephemeral sandboxes", t.stopEphemeral)
	t.pause = fyne.NewMenuItem("Pause new sandboxes", t.togglePause)
	t.windowPause = fyne.NewMenuItem("Pause new sandboxes", t.togglePause)
	quit := fyne.NewMenuItem("Quit Sandtray…", u.confirmQuit)
	quit.IsQuit = true
	items := []*fyne.MenuItem{t.count, fyne.NewMenuItemSeparator(), open, jobs, stopAll, t.pause}
	if desk := u.desktopItems(); len(desk) > 0 || u.opts.Autostart != nil {
		items = append(append(items, fyne.NewMenuItemSeparator()), desk...)
	}
	if u.opts.Autostart != nil {
		t.login = newLoginItem(u)
		items = append(items, t.login.item)
	}
	t.menu = fyne.NewMenu("Sandtray", append(items, fyne.NewMenuItemSeparator(), quit)...)
	u.guardTree(t.menu) // the tray takes each item's action as it is set
	if desk, ok := u.app.(desktop.App); ok {
		t.desk = desk
		desk.SetSystemTrayMenu(t.menu)
		desk.SetSystemTrayWindow(u.win)
		t.variant = u.app.Settings().ThemeVariant()
		desk.SetSystemTrayIcon(trayIcon(t.variant))
		u.app.Settings().AddListener(func(fyne.Settings) { u.protect("the theme's change", t.themeChanged) })
	}
	return t
}

// trayIcon picks the icon that stands out on a panel of the given variant.
func trayIcon(v fyne.ThemeVariant) fyne.Resource {
	if v == theme.VariantDark {
		return trayIconDark
	}
	return trayIconLight
}

func (t *trayMenu) themeChanged() {
	v := t.u.app.Settings().ThemeVariant()
	if v != t.variant {
		t.variant = v
		t.desk.SetSystemTrayIcon(trayIcon(v))
	}
}

// refresh shows the latest snapshot's count and pause state.
func (t *trayMenu) refresh() {
	count := RunningText(t.u.m.running())
	paused := t.u.m.snap.Paused
	if t.count.Label == count && t.pause.Checked == paused && t.windowPause.Checked == paused {
		return
	}
	t.count.Label = count
	t.pause.Checked, t.windowPause.Checked = paused, paused
	t.refreshMenu()
}

// refreshMenu shows changed items in the system tray, when there is one,
// and in the window's menu.
func (t *trayMenu) refreshMenu() {
	if t.desk != nil {
		t.menu.Refresh()
	}
	if m := t.u.win.MainMenu(); m != nil {
		m.Refresh()
	}
}

func (t *trayMenu) togglePause() {
	paused := !t.pause.Checked
	t.pause.Checked, t.windowPause.Checked = paused, paused
	t.refreshMenu()
	t.u.goSafe("pausing new sandboxes", func() { t.u.b.SetPaused(paused) })
}

func (t *trayMenu) stopEphemeral() {
	t.u.status.showMessage("Stopping ephemeral sandboxes…", kindInfo)
	t.u.background(func(ctx context.Context) error {
		return t.u.b.StopEphemeral(ctx)
	}, func(err error) {
		if err != nil {
			t.u.status.showMessage("Could not stop every ephemeral sandbox: "+err.Error(), kindError)
			t.u.notify("Sandtray", "Could not stop every ephemeral sandbox: "+err.Error())
			return
		}
		t.u.status.showMessage("Stopped all ephemeral sandboxes.", kindSuccess)
	})
}

// statusBar is the line at the bottom of the window: the Docker connection,
// whether new sandboxes are paused, the socket path and the MCP clients.
type statusBar struct {
	u       *UI
	docker  *widget.Label
	message *statusMessage
	paused  *widget.Label
	socket  *widget.Label
	clients *widget.Label
	pool    *widget.Label // what the warm pool holds (pool.go)
	row     *fyne.Container
}

func newStatusBar(u *UI) *statusBar {
	s := &statusBar{
		u:       u,
		docker:  widget.NewLabel("Connecting to Docker…"),
		message: newStatusMessage(u),
		paused:  widget.NewLabel("New sandboxes paused"),
		socket:  widget.NewLabel(SocketText(u.opts.SocketPath)),
		clients: widget.NewLabel(ClientsText(0)),
		pool:    widget.NewLabel(""),
	}
	// Neither the Docker status nor a message is cut: each wraps onto as
	// many lines as it needs (a reason Docker is away says what to do).
	s.docker.Wrapping = fyne.TextWrapWord
	s.message.onClear = s.socket.Show
	s.message.label.Wrapping = fyne.TextWrapWord
	s.paused.Importance = widget.WarningImportance
	s.paused.Hide()
	s.pool.Hide()                          // until there is a pool to show
	s.socket.Wrapping = fyne.TextWrapBreak // a long path wraps, as the rest of the line
	return s
}

func (s *statusBar) object() fyne.CanvasObject {
	right := container.NewHBox(s.paused, s.pool, s.clients)
	left := container.NewGridWithColumns(2, s.docker, container.NewStack(s.socket, s.message.label))
	s.row = container.NewBorder(nil, nil, nil, right, left)
	return container.NewVBox(widget.NewSeparator(), s.row)
}

// refresh shows the latest snapshot's Docker status, pause state and clients.
func (s *statusBar) refresh() {
	snap := s.u.m.snap
	importance := widget.SuccessImportance
	if !snap.Docker.Connected {
		importance = widget.DangerImportance
	}
	if text := DockerText(snap.Docker); text != s.docker.Text || importance != s.docker.Importance {
		s.docker.Text, s.docker.Importance = text, importance
		s.docker.Refresh()
	}
	clients, pool := ClientsText(snap.Sessions), PoolText(snap.Pool)
	if clients == s.clients.Text && snap.Paused == s.paused.Visible() && pool == s.pool.Text {
		return
	}
	s.clients.SetText(clients)
	s.pool.SetText(pool)
	if pool == "" {
		s.pool.Hide()
	} else {
		s.pool.Show()
	}
	if snap.Paused {
		s.paused.Show()
	} else {
		s.paused.Hide()
	}
	s.row.Refresh() // the right-hand side's width changed
}

// showMessage shows the outcome of a tray action in place of the socket
// path, which comes back when the message is stale.
func (s *statusBar) showMessage(text string, k messageKind) {
	s.message.show(text, k)
	s.socket.Hide()
}
