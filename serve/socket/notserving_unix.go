//go:build unix

package socket

import (
	"errors"
	"syscall"
)

// NotServing reports whether a Dial error means nobody serves the socket
// (no file, or a file nobody listens on), as opposed to a problem that
// starting an engine would not fix, such as a permission error.
func NotServing(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
