//go:build cgo && !linux

package host

// iconifyX11 is nil where the window is not an X11 window.
var iconifyX11 func(uintptr) bool
