package socket

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID returns the uid of the process at the other end of c, as the kernel
// recorded it at connect(2) time (LOCAL_PEERCRED, what getpeereid(3) reads).
// Some BSD-derived kernels ignore a socket file's mode in connect(2), so this
// check and the 0700 directory are what keep other users out.
func peerUID(c *net.UnixConn) (int, error) {
	uid := -1
	err := withFD(c, func(fd int) error {
		cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return err
		}
		uid = int(cred.Uid)
		return nil
	})
	return uid, err
}
