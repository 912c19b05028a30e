//go:build unix && !linux && !darwin

package socket

import (
	"errors"
	"net"
)

// peerUID fails closed where Sandtray has no peer-credential check: every
// connection is refused rather than accepted unchecked.
func peerUID(*net.UnixConn) (int, error) {
	return -1, errors.New("peer credentials are not supported on this OS")
}
