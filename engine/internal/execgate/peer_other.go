//go:build !linux

package execgate

import "net"

// peerPid cannot tell a connection's peer off Linux: no link is accepted
// there (the engine links only to sandboxes on its own Linux host).
func peerPid(*net.UnixConn) (int, bool) { return 0, false }
