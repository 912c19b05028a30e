package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The channel carries a sandbox's connections to the gate through the
// Docker API alone (no Docker network, no port published): a listener
// process in the sandbox, started with an exec, binds 127.0.0.1:Port on the
// sandbox's own loopback; each connection it accepts is handed (SCM_RIGHTS,
// over an abstract unix socket) to a relay process, another exec that the
// engine started ahead of need, which then copies between that socket and
// its own stdin and stdout, which the engine hands to the gate as a
// connection of that sandbox. One exec per connection: connections are
// isolated by the processes, and no multiplexing or flow control is needed.
// Both programs are python3's; an image without it cannot use egress.

// Ports inside a sandbox: the proxy the sandbox's environment names, and
// the one an install's own channel listens on while the rest is frozen.
const (
	ProxyPort   = 3128
	InstallPort = 3129
)

// Opener starts a process in one sandbox with its stdin and stdout attached
// as a Stream (the engine's Docker execs, the same path as expose_port's).
type Opener interface {
	Open(ctx context.Context, cmd []string) (Stream, error)
}

// ErrNoPython is the channel's start failing for want of python3.
var ErrNoPython = fmt.Errorf("the sandbox's image has no python3, which network \"egress\" needs to carry connections to the gate: use an image with python3 (the default image has it), or network \"none\": %w", sandbox.ErrUnsupported)

// listenerScript binds 127.0.0.1:<port> and the abstract unix socket
// "\0<name>"; it prints "r" when both are bound ("e <why>" and exit 2 when
// not), then hands each accepted connection to the next relay that
// connects to the unix socket, printing "w" for each connection that has to
// wait for one. It ends when its stdin does (the engine closed it).
const listenerScript = `import os,socket,sys,select,array
p=int(sys.argv[1]);n=sys.argv[2]
try:
    l=socket.socket(socket.AF_INET,socket.SOCK_STREAM)
    l.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)
    l.bind(("127.0.0.1",p));l.listen(128)
    u=socket.socket(socket.AF_UNIX,socket.SOCK_STREAM)
    u.bind("\0"+n);u.listen(128)
except OSError as e:
    os.write(1,("e %s\n"%e).encode());sys.exit(2)
os.write(1,b"r\n")
idle=[];wait=[]
def hand(k,c):
    try:
        k.sendmsg([b"x"],[(socket.SOL_SOCKET,socket.SCM_RIGHTS,array.array("i",[c.fileno()]))])
    except OSError:
        k.close();return False
    k.close();c.close();return True
while True:
    r,_,_=select.select([0,l,u]+idle,[],[])
    if 0 in r and not os.read(0,512):sys.exit(0)
    if l in r:
        c,_=l.accept()
        while idle and not hand(idle.pop(0),c):pass
        if c.fileno()>=0:
            wait.append(c);os.write(1,b"w\n")
    if u in r:
        k,_=u.accept()
        while wait:
            c=wait.pop(0)
            if hand(k,c):break
            wait.insert(0,c);k=None;break
        else:
            idle.append(k)
    for k in [k for k in idle if k in r]:
        idle.remove(k);k.close()
`

// relayScript connects to the listener's unix socket, waits for one
// connection, prints "+" once it has it, then copies the connection to its
// stdout and its stdin to the connection. stdin's end shuts the
// connection's write side; the connection's end ends the relay.
const relayScript = `import os,socket,sys,array,threading
u=socket.socket(socket.AF_UNIX,socket.SOCK_STREAM)
try:u.connect("\0"+sys.argv[1])
except OSError:sys.exit(3)
fds=array.array("i")
try:m,anc,_,_=u.recvmsg(1,socket.CMSG_SPACE(fds.itemsize))
except OSError:sys.exit(0)
for lv,ty,d in anc:
    if lv==socket.SOL_SOCKET and ty==socket.SCM_RIGHTS:fds.frombytes(d[:len(d)-len(d)%fds.itemsize])
if not fds:sys.exit(0)
u.close()
s=socket.socket(fileno=fds[0])
s.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)
os.write(1,b"+")
def up():
    try:
        while True:
            b=os.read(0,262144)
            if not b:break
            s.sendall(b)
    except OSError:pass
    try:s.shutdown(socket.SHUT_WR)
    except OSError:pass
threading.Thread(target=up,daemon=True).start()
try:
    while True:
        b=s.recv(262144)
        if not b:break
        v=memoryview(b)
        while v:v=v[os.write(1,v):]
except OSError:pass
os._exit(0)
`

// spares is how many relays a channel keeps waiting; maxRelaysWaiting
// bounds those started for a burst.
const (
	spares           = 2
	maxRelaysWaiting = 16
)

// Channel is one sandbox's channel to the gate. Close ends it.
type Channel struct {
	g      *Gate
	id     string
	open   Opener
	port   int
	name   string // the abstract unix socket's
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	idle   atomic.Int32 // relays started and waiting for a connection

	mu      sync.Mutex
	streams map[Stream]struct{} // the listener and the waiting relays, closed by Close
}

// StartChannel starts sandbox id's channel on port inside it (ProxyPort,
// or InstallPort for an install's), through o, and returns once the
// listener is bound. The listener is started again when it dies, until
// Close. A sandbox without python3 fails with ErrNoPython.
func (g *Gate) StartChannel(ctx context.Context, id string, o Opener, port int) (*Channel, error) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &Channel{g: g, id: id, open: o, port: port, name: "sandtray-egress-" + strconv.Itoa(port),
		log: g.log.With("sandbox", sandbox.ShortID(id), "port", port), ctx: cctx, cancel: cancel, streams: map[Stream]struct{}{}}
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	lst, err := c.startListener(sctx)
	if err != nil {
		cancel()
		return nil, err
	}
	c.wg.Add(1)
	go c.keepListening(lst)
	for range spares {
		c.spawn()
	}
	return c, nil
}

// Close ends the listener and the waiting relays; connections already
// handed to the gate go on until they end or the sandbox is unregistered.
func (c *Channel) Close() {
	c.cancel()
	c.mu.Lock()
	for s := range c.streams {
		s.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

func (c *Channel) track(s Stream) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return false
	}
	c.streams[s] = struct{}{}
	return true
}

func (c *Channel) untrack(s Stream) {
	c.mu.Lock()
	delete(c.streams, s)
	c.mu.Unlock()
}

// startListener starts the listener and waits for it to be bound.
func (c *Channel) startListener(ctx context.Context) (*bufio.Reader, error) {
	s, err := c.open.Open(ctx, []string{"python3", "-I", "-S", "-c", listenerScript, strconv.Itoa(c.port), c.name})
	if err != nil {
		return nil, fmt.Errorf("start the egress listener: %w", err)
	}
	if !c.track(s) {
		s.Close()
		return nil, context.Canceled
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	r := bufio.NewReader(s)
	line, err := r.ReadString('\n')
	switch {
	case strings.HasPrefix(line, "r"):
		return r, nil
	case strings.HasPrefix(line, "e "):
		err = fmt.Errorf("the egress listener could not bind 127.0.0.1:%d in the sandbox: %s: %w", c.port, strings.TrimSpace(line[2:]), sandbox.ErrConflict)
	case errors.Is(err, io.EOF) || err == nil:
		err = ErrNoPython
	}
	c.untrack(s)
	s.Close()
	return nil, err
}

// keepListening reads the listener's lines (a "w" starts one more relay)
// and starts it again when it ends, with growing pauses, until Close.
func (c *Channel) keepListening(r *bufio.Reader) {
	defer c.wg.Done()
	wait := 250 * time.Millisecond
	for {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			if strings.HasPrefix(line, "w") && c.idle.Load() < maxRelaysWaiting {
				c.spawn()
			}
		}
		if c.ctx.Err() != nil {
			return
		}
		c.log.Info("egress listener ended; starting it again", "after", wait)
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-time.After(wait):
			}
			ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
			nr, err := c.startListener(ctx)
			cancel()
			if err == nil {
				r, wait = nr, 250*time.Millisecond
				for int(c.idle.Load()) < spares {
					c.spawn()
				}
				break
			}
			if c.ctx.Err() != nil {
				return
			}
			c.log.Warn("egress listener could not start again", "err", err)
			wait = min(2*wait, 30*time.Second)
		}
	}
}

// spawn starts one relay in the background: it waits for a connection,
// then starts its replacement (keeping spares waiting) and hands the
// connection to the gate. A relay that ends without one is started again
// after a pause, while fewer than spares wait.
func (c *Channel) spawn() {
	c.idle.Add(1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		wait := 100 * time.Millisecond
		for c.ctx.Err() == nil {
			if s := c.relay(); s != nil {
				c.idle.Add(-1)
				if int(c.idle.Load()) < spares {
					c.spawn()
				}
				c.g.ServeConn(c.id, s)
				return
			}
			if int(c.idle.Load()) > spares {
				break
			}
			select {
			case <-c.ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, 5*time.Second)
		}
		c.idle.Add(-1)
	}()
}

// relay starts one relay process and waits until it has a connection.
func (c *Channel) relay() Stream {
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	s, err := c.open.Open(ctx, []string{"python3", "-I", "-S", "-c", relayScript, c.name})
	cancel()
	if err != nil {
		return nil
	}
	if !c.track(s) {
		s.Close()
		return nil
	}
	var hdr [1]byte
	_, err = io.ReadFull(s, hdr[:])
	c.untrack(s)
	if err != nil || hdr[0] != '+' {
		s.Close()
		return nil
	}
	return s
}
