//go:build linux

package loopback

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
)

// Checked says whether PeerUID can name a peer's user on this system.
const Checked = true

// procNet is where the kernel lists this network namespace's sockets.
const procNet = "/proc/net"

// PeerUID returns the uid that owns the socket at the other end of c, a TCP
// connection whose both ends are on this machine: the row of /proc/net/tcp
// (or tcp6) whose local address is c's remote one and whose remote address
// is c's local one. The owner is the user whose process made that socket.
// ErrNoPeer: the other end is not a live socket here (it closed already, or
// it is on another machine).
func PeerUID(c net.Conn) (int, error) {
	local, remote, err := ends(c)
	if err != nil {
		return -1, err
	}
	return lookup(procNet, binary.NativeEndian, remote, local)
}

// ends returns c's local and remote TCP addresses.
func ends(c net.Conn) (local, remote netip.AddrPort, err error) {
	l, lok := c.LocalAddr().(*net.TCPAddr)
	r, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return local, remote, fmt.Errorf("find the peer's user: %T is not a TCP connection", c)
	}
	return l.AddrPort(), r.AddrPort(), nil
}
