package portfwd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"syscall"

	"github.com/sandtray/sandtray/internal/loopback"
)

// HostRange is the host ports forwards may listen on (ports.host_range),
// Lo to Hi inclusive. The zero range leaves the choice to the system.
type HostRange struct{ Lo, Hi int }

// Contains reports whether port is in the range; every port is in the zero
// range.
func (r HostRange) Contains(port int) bool {
	return r == HostRange{} || port >= r.Lo && port <= r.Hi
}

func (r HostRange) String() string { return strconv.Itoa(r.Lo) + "-" + strconv.Itoa(r.Hi) }

// listenHost listens on 127.0.0.1 for a forward: on o.HostPort, or when it
// is 0 on a free port of o.HostRange (tried from a random one on, so two
// engines do not collide on the first), or one the system picks when there
// is no range. Connections from another user's sockets are refused where
// the system says whose a socket is (loopback.OwnUser): a forward is for
// the user whose assistant opened it.
func listenHost(ctx context.Context, o Options) (net.Listener, error) {
	ln, err := bindHost(ctx, o.HostPort, o.HostRange)
	if err != nil {
		return nil, err
	}
	return loopback.OwnUser(ln, o.Log, "port forward to sandbox port "+strconv.Itoa(o.Port)), nil
}

func bindHost(ctx context.Context, port int, r HostRange) (net.Listener, error) {
	var lc net.ListenConfig
	listen := func(p int) (net.Listener, error) {
		ln, err := lc.Listen(ctx, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return nil, fmt.Errorf("listen on 127.0.0.1:%d: %w", p, err)
		}
		return ln, nil
	}
	if port != 0 || r == (HostRange{}) {
		return listen(port)
	}
	size := r.Hi - r.Lo + 1
	start := rand.IntN(size)
	for i := range size {
		ln, err := listen(r.Lo + (start+i)%size)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			return ln, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("every host port of %s (ports.host_range) is in use: %w", r, syscall.EADDRINUSE)
}
