// Package agentclient is the engine's end of a sandbox's session with its
// agent (sandtray-agent, package agent; the protocol is agent/wire): one
// multiplexed stream per sandbox, over which processes run, files move and
// connections are carried, each in a stream of its own, with no container
// exec per operation.
//
// The agent runs where the model's code runs, so nothing it sends is
// trusted beyond its sandbox: each reply is read to a bound, each process
// frame too, file bodies to the length the engine asked for, connections
// it opens are counted (wire.MaxStreams), and any protocol error ends that
// sandbox's session only. A call never waits on the agent past its context.
package agentclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// helloTimeout bounds the agent's first answer.
const helloTimeout = 15 * time.Second

// ErrClosed is an operation on a session that has ended: the agent died, or
// broke the protocol, or the sandbox stopped. The engine starts a new one.
var ErrClosed = fmt.Errorf("the sandbox's agent session ended: %w", sandbox.ErrUnavailable)

// Handler takes a connection a sandbox's listener accepted (Listen).
type Handler = func(c net.Conn)

// Session is one sandbox's session with its agent. It is safe for
// concurrent use.
type Session struct {
	sess *wire.Session
	log  *slog.Logger

	// What the agent said in its hello: only the sandbox's business.
	Pid, UID, GID int

	mu       sync.Mutex
	handlers map[string]Handler // guarded by mu: listen tag → its handler
	incoming chan struct{}      // a token per connection the agent opened that is being handled
}

// New starts the engine's end of a session over conn (the agent's stdin and
// stdout) and waits for the agent's hello, at most until ctx ends or
// helloTimeout. It owns conn: Close closes it.
func New(ctx context.Context, conn io.ReadWriteCloser, log *slog.Logger) (*Session, error) {
	ys, err := wire.Client(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	s := &Session{sess: ys, log: log, handlers: map[string]Handler{}, incoming: make(chan struct{}, wire.MaxStreams)}
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	var r wire.Reply
	if err := s.ask(hctx, wire.Request{Op: wire.OpHello}, wire.MaxReply, &r); err != nil {
		ys.Close()
		return nil, fmt.Errorf("the sandbox's agent did not answer: %w", err)
	}
	if r.Version != wire.Version {
		ys.Close()
		return nil, fmt.Errorf("the sandbox's agent speaks version %d of the protocol, the engine %d: %w", r.Version, wire.Version, sandbox.ErrUnavailable)
	}
	s.Pid, s.UID, s.GID = r.Pid, r.UID, r.GID
	go s.acceptLoop()
	return s, nil
}

// Close ends the session: every stream of it ends, and the agent, which
// then reads the end of its stdin, stops serving.
func (s *Session) Close() error { return s.sess.Close() }

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.sess.CloseChan() }

// Closed reports whether the session has ended.
func (s *Session) Closed() bool { return s.sess.IsClosed() }

// open opens a stream for req, sends it, and ties the stream to ctx: when
// ctx ends first, the stream is closed (release, once the operation is
// over, unties it).
func (s *Session) open(ctx context.Context, req wire.Request) (st *wire.Stream, release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	st, err = s.sess.OpenStream()
	if err != nil {
		return nil, nil, s.ended(err)
	}
	stop := context.AfterFunc(ctx, func() { _ = st.SetDeadline(time.Now()); st.Close() })
	if err := wire.WriteJSON(st, wire.KindRequest, req); err != nil {
		stop()
		st.Close()
		return nil, nil, s.failed(ctx, err)
	}
	return st, func() { stop() }, nil
}

// reply reads a stream's reply into r (at most max bytes) and turns an
// error the agent reports into the engine's kind of error.
func (s *Session) reply(ctx context.Context, st io.Reader, max int, r *wire.Reply) error {
	if err := wire.ReadJSON(st, wire.KindReply, max, r); err != nil {
		return s.failed(ctx, err)
	}
	return replyError(*r)
}

// opTimeout bounds an operation whose whole answer is its reply, and each
// wait for the next piece of a file or a tar: an agent that stops answering
// fails the call, never hangs it.
const opTimeout = 30 * time.Second

// ask runs a request whose whole answer is its reply.
func (s *Session) ask(ctx context.Context, req wire.Request, max int, r *wire.Reply) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	st, release, err := s.open(ctx, req)
	if err != nil {
		return err
	}
	defer release()
	defer st.Close()
	return s.reply(ctx, st, max, r)
}

// failed is the error of an operation whose stream broke: ctx's when it
// ended first; otherwise the stream, or the whole session, failed. A
// protocol error (a frame over its bound, one of the wrong kind, bad JSON)
// ends the session: the agent is not trusted to recover.
func (s *Session) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if s.sess.IsClosed() {
		return s.ended(err)
	}
	if protocolError(err) {
		s.log.Warn("the sandbox's agent broke the protocol; ending its session", "err", err)
		s.sess.Close()
		return fmt.Errorf("the sandbox's agent sent something it should not (%v): %w", err, ErrClosed)
	}
	if wire.Dropped(err) {
		// The agent dropped the operation: it is dying, or its session is.
		return fmt.Errorf("the sandbox's agent ended the operation (%v): %w", err, ErrClosed)
	}
	return fmt.Errorf("the sandbox's agent: %w", err)
}

func (s *Session) ended(err error) error {
	if s.sess.IsClosed() {
		return ErrClosed
	}
	return fmt.Errorf("the sandbox's agent: %v: %w", err, ErrClosed)
}

// protocolError reports an error that only a misbehaving agent causes.
func protocolError(err error) bool { return errors.Is(err, wire.ErrProtocol) }

// idle gives every Read and Write of a stream opTimeout to make progress.
type idle struct{ *wire.Stream }

func (i idle) Read(p []byte) (int, error) {
	_ = i.Stream.SetReadDeadline(time.Now().Add(opTimeout))
	return i.Stream.Read(p)
}

func (i idle) Write(p []byte) (int, error) {
	_ = i.Stream.SetWriteDeadline(time.Now().Add(opTimeout))
	return i.Stream.Write(p)
}
