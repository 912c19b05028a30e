package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Backend is what the control endpoint needs of the engine; the host wires
// *engine.Engine to it.
type Backend interface {
	EgressPending() []sandbox.EgressPending
	AnswerEgress(ctx context.Context, id string, a sandbox.EgressAnswer) error
	AnswerEgressHost(ctx context.Context, ref, target string, a sandbox.EgressAnswer) (int, error)
	EgressNetwork(ctx context.Context, ref string) (sandbox.EgressNetwork, error)
	// Snapshots follows the engine's snapshots (engine.Engine.Watch).
	Snapshots(ctx context.Context) Snapshots
}

// Snapshots is a follower of the engine's snapshots.
type Snapshots interface {
	Next(ctx context.Context) (sandbox.Snapshot, error)
}

// Handler answers one method; a stream method calls send for each event
// and returns when the stream ends.
type Handler func(ctx context.Context, params json.RawMessage, send func(any) error) (any, error)

// Server serves the control protocol. Create it with NewServer; Handle adds
// methods (the app's window's: app/host).
type Server struct {
	mu       sync.Mutex
	handlers map[string]Handler
	streams  map[string]bool // methods that stream until the client leaves
	log      *slog.Logger
	win      windows // the engine's window (app.go)
}

// NewServer returns a server with the egress methods on b (none when b is
// nil: an app whose engine cannot start serves the app's methods alone).
func NewServer(b Backend, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{handlers: map[string]Handler{}, streams: map[string]bool{}, log: log}
	s.handleApp()
	if b == nil { // no engine yet (the app shows why): the app's methods alone
		return s
	}
	s.Handle(MethodPending, func(ctx context.Context, _ json.RawMessage, _ func(any) error) (any, error) {
		return b.EgressPending(), nil
	})
	s.Handle(MethodAnswer, func(ctx context.Context, raw json.RawMessage, _ func(any) error) (any, error) {
		var p AnswerParams
		if err := json.Unmarshal(raw, &p); err != nil || p.ID == "" {
			return nil, errBadParams(MethodAnswer, errors.Join(err, errors.New("id is required")))
		}
		if err := b.AnswerEgress(ctx, p.ID, p.Answer); err != nil {
			return nil, err
		}
		return AnswerResult{Answered: 1}, nil
	})
	s.Handle(MethodAnswerHost, func(ctx context.Context, raw json.RawMessage, _ func(any) error) (any, error) {
		var p AnswerParams
		if err := json.Unmarshal(raw, &p); err != nil || p.Sandbox == "" || p.Host == "" {
			return nil, errBadParams(MethodAnswerHost, errors.Join(err, errors.New("sandbox and host are required")))
		}
		n, err := b.AnswerEgressHost(ctx, p.Sandbox, p.Host, p.Answer)
		if err != nil {
			return nil, err
		}
		return AnswerResult{Answered: n}, nil
	})
	s.Handle(MethodNetwork, func(ctx context.Context, raw json.RawMessage, _ func(any) error) (any, error) {
		var p SandboxParams
		if err := json.Unmarshal(raw, &p); err != nil || p.Sandbox == "" {
			return nil, errBadParams(MethodNetwork, errors.Join(err, errors.New("sandbox is required")))
		}
		return b.EgressNetwork(ctx, p.Sandbox)
	})
	s.HandleStream(MethodWatch, func(ctx context.Context, _ json.RawMessage, send func(any) error) (any, error) {
		w := b.Snapshots(ctx)
		last := b.EgressPending()
		if err := send(last); err != nil {
			return nil, err
		}
		for {
			snap, err := w.Next(ctx)
			if err != nil {
				return nil, err
			}
			if !samePending(snap.Egress, last) {
				last = snap.Egress
				if err := send(last); err != nil {
					return nil, err
				}
			}
		}
	})
	return s
}

func samePending(a, b []sandbox.EgressPending) bool {
	return slices.EqualFunc(a, b, func(x, y sandbox.EgressPending) bool { return x.ID == y.ID })
}

// Handle adds (or replaces) method.
func (s *Server) Handle(method string, h Handler) {
	s.mu.Lock()
	s.handlers[method] = h
	delete(s.streams, method)
	s.mu.Unlock()
}

// HandleStream adds (or replaces) a stream method: one that sends events
// until the client closes the connection (which cancels its ctx).
func (s *Server) HandleStream(method string, h Handler) {
	s.mu.Lock()
	s.handlers[method] = h
	s.streams[method] = true
	s.mu.Unlock()
}

// Serve accepts connections on ln until ctx is done or ln fails, and
// returns once every connection has ended. ln must be private to the user
// (serve/socket's Listen).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("control endpoint: %w", err)
		}
		wg.Go(func() { s.serveConn(ctx, c) })
	}
}

// Pipe returns a dialer of in-memory connections to s, each served until
// it is closed or ctx is done: the app that runs the engine talks to it
// through one, as an app attached to it does over the socket, with the
// same client and the same handlers.
func (s *Server) Pipe(ctx context.Context) Dialer {
	return func(dctx context.Context) (net.Conn, error) {
		if err := cmpErr(ctx.Err(), dctx.Err()); err != nil {
			return nil, fmt.Errorf("control endpoint: %w", err)
		}
		client, server := net.Pipe()
		go s.serveConn(ctx, server)
		return client, nil
	}
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// maxLine bounds one request.
const maxLine = 1 << 20

// serveConn answers one connection's requests, one at a time.
func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	enc := json.NewEncoder(c)
	var encMu sync.Mutex
	write := func(r Response) error {
		encMu.Lock()
		defer encMu.Unlock()
		return enc.Encode(r)
	}
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			_ = write(Response{Error: &Error{Kind: "invalid", Message: "a request is one line of JSON: {\"id\":1,\"method\":\"egress.pending\"}"}})
			return
		}
		s.mu.Lock()
		h, stream := s.handlers[req.Method], s.streams[req.Method]
		s.mu.Unlock()
		if h == nil {
			_ = write(Response{ID: req.ID, Error: &Error{Kind: "invalid", Message: fmt.Sprintf("unknown method %q", req.Method)}})
			continue
		}
		send := func(ev any) error {
			b, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			return write(Response{ID: req.ID, Event: b})
		}
		if stream {
			// A stream ends with the connection: watch for the client's EOF.
			go func() {
				var one [1]byte
				_, _ = c.Read(one[:])
				cancel()
			}()
		}
		res, err := h(ctx, req.Params, send)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			_ = write(Response{ID: req.ID, Error: errorOf(err)})
			continue
		}
		b, err := json.Marshal(res)
		if err != nil {
			_ = write(Response{ID: req.ID, Error: errorOf(err)})
			continue
		}
		if err := write(Response{ID: req.ID, Result: b}); err != nil {
			s.log.Debug("control endpoint: write", "err", err)
			return
		}
	}
}
