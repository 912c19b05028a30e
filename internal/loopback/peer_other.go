//go:build !linux

package loopback

import "net"

// Checked says whether PeerUID can name a peer's user on this system: not
// here. macOS and the BSDs list TCP sockets with their owner through the
// net.inet.tcp.pcblist sysctl, and Windows through GetExtendedTcpTable and
// the owning process; neither is built, as neither could be tested here.
const Checked = false

// PeerUID returns ErrNotChecked on this system.
func PeerUID(net.Conn) (int, error) { return -1, ErrNotChecked }
