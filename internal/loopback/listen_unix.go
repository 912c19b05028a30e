//go:build !windows

package loopback

import (
	"errors"
	"syscall"
)

// addrInUse reports whether a listen failed because the address is taken.
func addrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

// familyAbsent reports whether a listen failed because this machine has no
// such address (IPv6 turned off, or no ::1).
func familyAbsent(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT)
}
