package egress

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The channel carries a sandbox's connections to the gate through the
// sandbox's agent alone (no Docker network, no port published): the agent
// listens on 127.0.0.1:Port on the sandbox's own loopback, and each
// connection it accepts comes to the engine as a stream of the sandbox's
// session with it, which the engine hands to the gate as a connection of
// that sandbox. No program of the image's is needed: an image without
// python3, a shell or anything else has egress as well.

// Ports inside a sandbox: the proxy the sandbox's environment names, and
// the one an install's own channel listens on while the rest is frozen.
const (
	ProxyPort   = 3128
	InstallPort = 3129
)

// Agent is a sandbox's session with its agent, as a channel uses it
// (engine/internal/agentclient's Session).
type Agent interface {
	// Listen has the agent listen on port; each connection goes to h.
	Listen(ctx context.Context, port int, tag string, h func(net.Conn)) (stop func(), err error)
	// Done is closed when the session has ended.
	Done() <-chan struct{}
}

// Sessions returns a sandbox's live session, starting one when it has none.
type Sessions func(ctx context.Context) (Agent, error)

// Channel is one sandbox's channel to the gate. Close ends it.
type Channel struct {
	g      *Gate
	id     string
	port   int
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartChannel starts sandbox id's channel on port inside it (ProxyPort,
// or InstallPort for an install's), through its agent's session, and
// returns once the agent listens. When the session ends (the agent died,
// the sandbox restarted), the channel listens again on the next one, until
// Close.
func (g *Gate) StartChannel(ctx context.Context, id string, sessions Sessions, port int) (*Channel, error) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &Channel{g: g, id: id, port: port, cancel: cancel,
		log: g.log.With("sandbox", sandbox.ShortID(id), "port", port)}
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	a, stop, err := c.listen(sctx, sessions)
	if err != nil {
		cancel()
		return nil, err
	}
	c.wg.Add(1)
	go c.keepListening(cctx, sessions, a, stop)
	return c, nil
}

// Close stops the listener; connections already handed to the gate go on
// until they end or the sandbox is unregistered.
func (c *Channel) Close() {
	c.cancel()
	c.wg.Wait()
}

// listen has the agent of the sandbox's live session listen on the port.
func (c *Channel) listen(ctx context.Context, sessions Sessions) (Agent, func(), error) {
	a, err := sessions(ctx)
	if err != nil {
		return nil, nil, err
	}
	stop, err := a.Listen(ctx, c.port, "egress-"+strconv.Itoa(c.port), func(conn net.Conn) {
		c.g.ServeConn(c.id, conn.(Stream))
	})
	if err != nil {
		return nil, nil, err
	}
	return a, stop, nil
}

// keepListening listens again on a new session whenever the one it
// listened on ends, with growing pauses, until ctx ends.
func (c *Channel) keepListening(ctx context.Context, sessions Sessions, a Agent, stop func()) {
	defer c.wg.Done()
	wait := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			stop()
			return
		case <-a.Done():
			stop()
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			na, nstop, err := c.listen(lctx, sessions)
			cancel()
			if err == nil {
				a, stop, wait = na, nstop, 100*time.Millisecond
				break
			}
			if ctx.Err() != nil {
				return
			}
			c.log.Warn("egress listener could not start again", "err", err)
			wait = min(2*wait, 30*time.Second)
		}
	}
}
