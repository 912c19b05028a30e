//go:build cgo && !(linux || freebsd || openbsd || netbsd)

package host

// desktopServices: macOS's menu bar and Windows' notification area always
// show the tray icon, and both have notifications.
func desktopServices() (noTray string, notifications bool) { return "", true }
