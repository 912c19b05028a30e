//go:build cgo && linux

package host

/*
#cgo pkg-config: x11
#include <X11/Xlib.h>

// iconify asks the window manager to minimise window w, on a display
// connection of its own (Fyne's is GLFW's, out of reach).
static int iconify(unsigned long w) {
	Display *d = XOpenDisplay(NULL);
	if (!d) return 0;
	int ok = XIconifyWindow(d, (Window)w, DefaultScreen(d));
	XFlush(d);
	XCloseDisplay(d);
	return ok;
}
*/
import "C"

// iconifyX11 minimises the X11 window handle w; false when the X server or
// window manager would not.
func iconifyX11(w uintptr) bool { return C.iconify(C.ulong(w)) != 0 }
