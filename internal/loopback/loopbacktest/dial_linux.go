package loopbacktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Nobody is a uid that is not the test's own (the usual "nobody").
const Nobody = 65534

// ErrCannot means this process cannot make sockets as another user.
var ErrCannot = errors.New("connecting as another user needs root (CAP_SETUID)")

// Available reports whether DialAs can work here.
func Available() bool { return os.Geteuid() == 0 }

// DialAs connects to addr (a literal IP and port: a name could make the
// dialer race both families on other threads) over TCP with a socket owned
// by uid. Only the
// socket's creation runs as uid: this goroutine's thread switches its
// file-system uid around the call and back, and no other goroutine runs on
// that thread meanwhile.
func DialAs(ctx context.Context, uid int, network, addr string) (net.Conn, error) {
	if !Available() {
		return nil, ErrCannot
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, _ := unix.SetfsuidRetUid(uid)
	defer unix.SetfsuidRetUid(prev)
	if now, _ := unix.SetfsuidRetUid(-1); now != uid {
		return nil, fmt.Errorf("%w: setfsuid(%d) left the fsuid at %d", ErrCannot, uid, now)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
