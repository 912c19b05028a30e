package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// maxInFlight bounds the requests one connection runs at once; beyond it the
// connection stops reading until one finishes.
const maxInFlight = 32

// ServeConn serves conn as one MCP session speaking newline-delimited
// JSON-RPC (MCP's stdio framing). Requests run concurrently, so a
// notifications/cancelled can reach a running tool call; notifications are
// handled in order as they arrive. It does not return until ctx is done or
// the peer closes its side; either way in-flight requests are cancelled, the
// session ends once they have returned, and conn is closed.
func (s *Server) ServeConn(ctx context.Context, conn io.ReadWriteCloser) error {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopClosing := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopClosing()

	session := newConnSession()
	if err := s.mcp.RegisterSession(ctx, session); err != nil {
		return fmt.Errorf("register MCP session: %w", err)
	}
	ctx = s.mcp.WithContext(ctx, session)

	out := newConnWriter(conn, session.notifications, cancel, s.log)
	go out.run()

	var requests sync.WaitGroup
	err := s.readLoop(ctx, conn, out, &requests)
	cancel()
	requests.Wait()
	out.stop()
	s.mcp.UnregisterSession(context.WithoutCancel(ctx), session.SessionID())
	return err
}

// readLoop dispatches each line of r until EOF or ctx is done.
func (s *Server) readLoop(ctx context.Context, r io.Reader, out *connWriter, requests *sync.WaitGroup) error {
	lines := newLineReader(r, s.opts.MaxRequestBytes+envelopeSlack)
	slots := make(chan struct{}, maxInFlight)
	for {
		line, err := lines.next()
		var tooLong *oversizeError
		switch {
		case errors.As(err, &tooLong):
			s.log.Warn("mcp request over the size limit", "bytes", tooLong.size, "method", tooLong.method)
			if reply := oversizeReply(tooLong, s.opts.MaxRequestBytes); reply != nil {
				out.send(reply)
			}
			continue
		case errors.Is(err, io.EOF) || (err != nil && ctx.Err() != nil):
			return nil
		case err != nil:
			return fmt.Errorf("read MCP message: %w", err)
		case len(line) == 0:
			continue
		}
		env := peekEnvelope(line)
		switch {
		case env.isResponse():
			continue // the server sends no requests that await an answer
		case env.isRequest():
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
			requests.Go(func() {
				defer func() { <-slots }()
				s.handle(ctx, env, line, out)
			})
		default:
			s.handle(ctx, env, line, out)
		}
	}
}

// handle passes one message to mcp-go and queues its reply, if any.
func (s *Server) handle(ctx context.Context, env envelope, line []byte, out *connWriter) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp message handler panicked", "method", env.Method, "panic", p)
			if env.isRequest() {
				out.send(errorReply(env.ID, mcp.INTERNAL_ERROR, "internal error"))
			}
		}
	}()
	if reply := s.mcp.HandleMessage(ctx, line); reply != nil {
		out.send(reply)
	}
}

// envelope is the part of a JSON-RPC message that says what kind it is.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func peekEnvelope(line []byte) envelope {
	var env envelope
	_ = json.Unmarshal(line, &env) // a malformed line is mcp-go's to answer
	return env
}

func (e envelope) hasID() bool      { return len(e.ID) > 0 && string(e.ID) != "null" }
func (e envelope) isRequest() bool  { return e.hasID() && e.Method != "" }
func (e envelope) isResponse() bool { return e.hasID() && e.Method == "" }
func errorReply(id json.RawMessage, code int, message string) json.RawMessage {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION,
		"id":      id,
		"error":   map[string]any{"code": code, "message": message},
	})
	return body
}

// connSession is the mcp-go session of one connection. It records the
// client's info and protocol version, which mcp-go sets at initialize (or on
// each stateless request).
type connSession struct {
	id              string
	notifications   chan mcp.JSONRPCNotification
	initialized     atomic.Bool
	clientInfo      atomic.Pointer[mcp.Implementation]
	capabilities    atomic.Pointer[mcp.ClientCapabilities]
	protocolVersion atomic.Pointer[string]
}

var (
	_ server.SessionWithClientInfo      = (*connSession)(nil)
	_ server.SessionWithProtocolVersion = (*connSession)(nil)
)

func newConnSession() *connSession {
	// Session ids outlive the process in the engine's state, so they must
	// not repeat after a restart: random, not a counter.
	return &connSession{id: rand.Text(), notifications: make(chan mcp.JSONRPCNotification, 256)}
}

func (c *connSession) SessionID() string { return c.id }
func (c *connSession) Initialize()       { c.initialized.Store(true) }
func (c *connSession) Initialized() bool { return c.initialized.Load() }

func (c *connSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return c.notifications
}

func (c *connSession) GetClientInfo() mcp.Implementation {
	if p := c.clientInfo.Load(); p != nil {
		return *p
	}
	return mcp.Implementation{}
}

func (c *connSession) SetClientInfo(info mcp.Implementation) { c.clientInfo.Store(&info) }

func (c *connSession) GetClientCapabilities() mcp.ClientCapabilities {
	if p := c.capabilities.Load(); p != nil {
		return *p
	}
	return mcp.ClientCapabilities{}
}

func (c *connSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	c.capabilities.Store(&caps)
}

func (c *connSession) ProtocolVersion() string {
	if p := c.protocolVersion.Load(); p != nil {
		return *p
	}
	return ""
}

func (c *connSession) SetProtocolVersion(v string) { c.protocolVersion.Store(&v) }

// connWriter owns the write side of a connection: one goroutine writes
// replies and notifications, one message per line. Before each reply it
// flushes the notifications already queued, so a tool call's progress
// notifications always precede its result.
type connWriter struct {
	w       io.Writer
	notes   <-chan mcp.JSONRPCNotification
	replies chan any
	quit    chan struct{}
	done    chan struct{}
	broken  func() // called once when a write fails: the peer is gone
	log     *slog.Logger
	failed  bool
}

func newConnWriter(w io.Writer, notes <-chan mcp.JSONRPCNotification, broken func(), log *slog.Logger) *connWriter {
	return &connWriter{
		w: w, notes: notes, broken: broken, log: log,
		replies: make(chan any),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// send queues a reply; it blocks until the writer takes it.
func (cw *connWriter) send(msg any) {
	select {
	case cw.replies <- msg:
	case <-cw.done:
	}
}

// stop ends run after flushing queued notifications; call it once every
// sender has returned.
func (cw *connWriter) stop() {
	close(cw.quit)
	<-cw.done
}

func (cw *connWriter) run() {
	defer close(cw.done)
	for {
		select {
		case n := <-cw.notes:
			cw.write(n)
		case msg := <-cw.replies:
			cw.flushNotes()
			cw.write(msg)
		case <-cw.quit:
			cw.flushNotes()
			return
		}
	}
}

func (cw *connWriter) flushNotes() {
	for {
		select {
		case n := <-cw.notes:
			cw.write(n)
		default:
			return
		}
	}
}

func (cw *connWriter) write(msg any) {
	if cw.failed {
		return
	}
	body, err := json.Marshal(msg)
	if err != nil {
		cw.log.Error("encode MCP message", "err", err)
		return
	}
	if _, err := cw.w.Write(append(body, '\n')); err != nil {
		cw.failed = true
		cw.log.Debug("write MCP message; dropping the connection", "err", err)
		cw.broken()
	}
}
