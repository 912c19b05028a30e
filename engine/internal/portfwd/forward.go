// Package portfwd forwards a TCP port inside a sandbox to the host's
// loopback. A Forward listens on 127.0.0.1 only; each connection it accepts
// becomes one relay: a connection the sandbox's agent makes to
// 127.0.0.1:<port> there (through an Opener, a stream of the sandbox's
// session with its agent), with bytes copied both ways, half-closes included. Nothing depends on the
// sandbox's network (it may be "none") or on Docker publishing ports, so a
// forward works the same with a remote daemon. Bytes only ever flow between
// a client that connected to the host's loopback and the sandbox's port: the
// sandbox cannot open anything through a forward.
package portfwd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"
)

// Opener connects to a port on one sandbox's own loopback. The engine's is
// the sandbox's agent (engine/internal/agentclient).
type Opener interface {
	Open(ctx context.Context, port int) (Stream, error)
}

// Stream is a connection into the sandbox: CloseWrite ends what is sent
// (the server reads EOF) while what it sends keeps coming.
type Stream interface {
	io.ReadWriteCloser
	CloseWrite() error
}

// openTimeout bounds reaching the sandbox's port for one connection.
const openTimeout = 30 * time.Second

// Options configure a Forward.
type Options struct {
	Opener   Opener
	Port     int // the port inside the sandbox
	HostPort int // the port on 127.0.0.1; 0 picks a free one (in HostRange)
	// HostRange is where a free host port is picked; zero: anywhere.
	HostRange HostRange
	// MaxConns bounds the connections relayed at once; more are closed at
	// once. 0 means 64.
	MaxConns int
	Log      *slog.Logger
}

// Forward is one listening forward. Close ends it.
type Forward struct {
	o        Options
	ln       net.Listener
	hostPort int
	ctx      context.Context // done when Close starts
	cancel   context.CancelFunc
	slots    chan struct{}  // one per relay in flight
	wg       sync.WaitGroup // the accept loop and every relay
	closeOne sync.Once
}

// Start listens on 127.0.0.1:o.HostPort and relays each connection into the
// sandbox; connections from another user's processes are refused where the
// system says whose they are (Linux). ctx bounds only the start: the forward
// runs until Close. A host port in use fails with an error naming it.
func Start(ctx context.Context, o Options) (*Forward, error) {
	if o.MaxConns <= 0 {
		o.MaxConns = 64
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	ln, err := listenHost(ctx, o) // hostport.go
	if err != nil {
		return nil, err
	}
	// The forward outlives ctx, which bounds only the start: its context
	// keeps ctx's values but not its end, and ends with Close.
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &Forward{
		o: o, ln: ln, hostPort: ln.Addr().(*net.TCPAddr).Port,
		ctx: fctx, cancel: cancel, slots: make(chan struct{}, o.MaxConns),
	}
	f.wg.Add(1)
	go f.acceptLoop()
	return f, nil
}

// HostPort is the port the forward listens on, on 127.0.0.1.
func (f *Forward) HostPort() int { return f.hostPort }

// URL is the http URL of the forward.
func (f *Forward) URL() string { return "http://127.0.0.1:" + strconv.Itoa(f.hostPort) + "/" }

// Close stops listening, ends every relay and waits for them.
func (f *Forward) Close() error {
	f.closeOne.Do(func() {
		f.cancel()
		f.ln.Close()
	})
	f.wg.Wait()
	return nil
}

// acceptLoop accepts until the listener is closed (by Close).
func (f *Forward) acceptLoop() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			if f.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				f.o.Log.Warn("port forward stopped accepting", "port", f.o.Port, "err", err)
			}
			return
		}
		select {
		case f.slots <- struct{}{}:
		default:
			f.o.Log.Warn("port forward at its connection limit; closing a new connection", "port", f.o.Port, "limit", f.o.MaxConns)
			c.Close()
			continue
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer func() { <-f.slots }()
			f.relay(c.(*net.TCPConn))
		}()
	}
}

// relay carries one client connection into the sandbox. It returns when
// both directions have ended, or when the forward closes.
func (f *Forward) relay(client *net.TCPConn) {
	defer client.Close()
	ctx, cancel := context.WithTimeout(f.ctx, openTimeout)
	s, err := f.o.Opener.Open(ctx, f.o.Port)
	cancel()
	if err != nil {
		f.o.Log.Info("port forward could not reach the sandbox", "port", f.o.Port, "err", err)
		_ = client.SetLinger(0) // a reset: the client sees a refusal, not an empty reply
		return
	}
	defer s.Close()
	stop := context.AfterFunc(f.ctx, func() { client.Close(); s.Close() })
	defer stop()
	pipe(client, s)
}

// halfCloser is a connection whose write side can be shut down alone.
type halfCloser interface {
	io.ReadWriter
	CloseWrite() error
}

// pipe copies a to b and b to a until both directions end, passing each
// end-of-stream on as a half-close (CloseWrite) so the other side sees EOF
// while it can still send. When nothing at all came from b (the sandbox's
// server refused the connection), a is reset if it is a TCP connection.
func pipe(a *net.TCPConn, b halfCloser) {
	up := make(chan struct{})
	go func() {
		defer close(up)
		_, _ = io.Copy(b, a)
		_ = b.CloseWrite()
	}()
	n, _ := io.Copy(a, b)
	if n == 0 {
		_ = a.SetLinger(0)
		a.Close() // unblocks the upstream copy
	} else {
		_ = a.CloseWrite()
	}
	<-up
}
