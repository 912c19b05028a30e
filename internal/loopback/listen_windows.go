package loopback

import (
	"errors"

	"golang.org/x/sys/windows"
)

// addrInUse reports whether a listen failed because the address is taken.
func addrInUse(err error) bool { return errors.Is(err, windows.WSAEADDRINUSE) }

// familyAbsent reports whether a listen failed because this machine has no
// such address (IPv6 turned off).
func familyAbsent(err error) bool {
	return errors.Is(err, windows.WSAEADDRNOTAVAIL) || errors.Is(err, windows.WSAEAFNOSUPPORT)
}
