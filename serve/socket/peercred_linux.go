package socket

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID returns the uid of the process at the other end of c, as the kernel
// recorded it at connect(2) time (SO_PEERCRED), so the peer cannot lie.
func peerUID(c *net.UnixConn) (int, error) {
	uid := -1
	err := withFD(c, func(fd int) error {
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			return err
		}
		uid = int(cred.Uid)
		return nil
	})
	return uid, err
}
