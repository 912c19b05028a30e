//go:build !linux

package loopbacktest

import (
	"context"
	"errors"
	"net"
)

// Nobody is a uid that is not the test's own (the usual "nobody").
const Nobody = 65534

// ErrCannot means this process cannot make sockets as another user.
var ErrCannot = errors.New("connecting as another user is only built for Linux")

// Available reports whether DialAs can work here: never.
func Available() bool { return false }

// DialAs returns ErrCannot on this system.
func DialAs(context.Context, int, string, string) (net.Conn, error) { return nil, ErrCannot }
