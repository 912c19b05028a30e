package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// MaxInFlight bounds the requests one connection runs at once; beyond it the
// connection stops reading until one finishes.
const MaxInFlight = 32

// ServeConn serves conn as one MCP session speaking newline-delimited
// JSON-RPC (MCP's stdio framing). Requests run concurrently, so a
// notifications/cancelled can reach a running tool call, whose context it
// cancels; notifications are handled in order as they arrive. It does not return until ctx is done or
// the peer closes its side; either way in-flight requests are cancelled, the
// session ends once they have returned, and conn is closed.
func (s *Server) ServeConn(ctx context.Context, conn io.ReadWriteCloser) error {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopClosing := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopClosing()

	session := newConnSession(s.opts.ChangesURI)
	if err := s.mcp.RegisterSession(ctx, session); err != nil {
		return fmt.Errorf("register MCP session: %w", err)
	}
	s.live.add(session)
	defer s.live.remove(session)
	ctx = s.mcp.WithContext(ctx, session)

	out := newConnWriter(conn, session, cancel, s.log)
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
	slots := make(chan struct{}, MaxInFlight)
	budget := newRequestBytes(s.opts.MaxRequestBytes)
	running := newInflight()
	for {
		line, err := lines.next()
		var tooLong *oversizeError
		switch {
		case errors.As(err, &tooLong):
			s.log.Warn("mcp request over the size limit", "bytes", tooLong.size, "method", tooLong.method)
			if reply := s.oversizeReply(tooLong); reply != nil {
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
			// Stop reading until the request's bytes fit the budget.
			giveBack, err := budget.acquire(ctx, len(line))
			if err != nil {
				<-slots
				return nil
			}
			s.start(ctx, env, line, out, running, requests, func() { giveBack(); <-slots })
		default:
			if env.Method == string(mcp.MethodNotificationCancelled) {
				running.cancelled(line)
			}
			if reply := s.handle(ctx, env, line); reply != nil {
				out.send(reply)
			}
		}
	}
}

// start runs a request on a goroutine of its own, registered with running
// first so that a cancellation read next finds it, and calls release when it
// is done.
func (s *Server) start(ctx context.Context, env envelope, line []byte, out *connWriter,
	running *inflight, requests *sync.WaitGroup, release func()) {
	ctx, call, done := running.start(ctx, env.ID)
	requests.Go(func() {
		defer release()
		reply := s.handle(ctx, env, line)
		done()
		// A request the client cancelled gets no reply (MCP's cancellation
		// rule): its caller has stopped waiting for one.
		if reply != nil && !call.cancelled.Load() {
			out.send(reply)
		}
	})
}

// handle passes one message to mcp-go and returns its reply, if any.
func (s *Server) handle(ctx context.Context, env envelope, line []byte) (reply any) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp message handler panicked", "method", env.Method, "panic", p)
			if env.isRequest() {
				reply = errorReply(env.ID, mcp.INTERNAL_ERROR, "internal error")
			}
		}
	}()
	if msg := s.mcp.HandleMessage(withTaskSlot(ctx), line); msg != nil {
		return msg
	}
	return nil
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
