//go:build cgo && (linux || freebsd || openbsd || netbsd)

package host

import (
	"github.com/godbus/dbus/v5"
)

// desktopServices says what the desktop offers the app on the session bus:
// noTray is why no tray icon will show ("" when a StatusNotifier host
// answers), and notifications whether a notification service answers.
// Fyne's tray only logs "systray error: failed to connect to DBus" and
// carries on without an icon, so the app asks the bus itself: the
// StatusNotifierWatcher must be there and have a host (a panel) registered.
func desktopServices() (noTray string, notifications bool) {
	conn, err := dbus.ConnectSessionBus() // a private connection: the shared one is Fyne's
	if err != nil {
		return "this desktop has no D-Bus session bus, so no tray icon can show", false
	}
	defer conn.Close()
	has := func(name string) bool {
		var owned bool
		err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&owned)
		return err == nil && owned
	}
	notifications = has("org.freedesktop.Notifications")
	if !has("org.kde.StatusNotifierWatcher") {
		return "no tray (StatusNotifier) host answers on this desktop; on GNOME, the AppIndicator extension adds one", notifications
	}
	v, err := conn.Object("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher").
		GetProperty("org.kde.StatusNotifierWatcher.IsStatusNotifierHostRegistered")
	if registered, ok := v.Value().(bool); err == nil && ok && !registered {
		return "the desktop's tray watcher has no panel to show icons in", notifications
	}
	return "", notifications
}
