package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/mcpserver"
	"github.com/sandtray/sandtray/serve/socket"
)

// cleanupTimeout bounds removing a stack's sandboxes and pool at the end.
const cleanupTimeout = time.Minute

// stack is an engine of the bench's own, serving MCP on a private socket as
// `sandtray serve` does. Its containers carry a test label unique to the
// run, so it never sees the user's sandboxes, nor the user's engine its own.
type stack struct {
	eng    *engine.Engine
	srv    *mcpserver.Server
	ln     *socket.Listener
	cancel context.CancelFunc
	conns  sync.WaitGroup
	served chan struct{} // closed when the accept loop has returned
	copies string        // a folder of the host copy_from_sandbox may write (Host.AllowedRoots)
}

// startStack starts an engine with cfg (its state under dir) and serves it on
// dir/mcp.sock.
func startStack(ctx context.Context, cfg config.Config, dir, label string, log *slog.Logger) (*stack, error) {
	cfg.StateDir = filepath.Join(dir, "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	eng, err := engine.New(ctx, cfg, engine.Options{Logger: log, Labels: map[string]string{sandbox.LabelTest: label}})
	if err != nil {
		return nil, fmt.Errorf("start engine: %w", err)
	}
	ln, err := socket.Listen(filepath.Join(dir, "mcp.sock"), socket.WithLogger(log))
	if err != nil {
		eng.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("MCP socket: %w", err)
	}
	srv := mcpserver.New(eng, mcpserver.Options{
		Version: "bench", MaxRequestBytes: cfg.Limits.MaxRequestBytes, Logger: log,
		Languages: engine.Languages(), LanguageAliases: engine.LanguageAliases(),
	})
	serveCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &stack{eng: eng, srv: srv, ln: ln, cancel: cancel, served: make(chan struct{})}
	go s.serve(serveCtx, srv)
	return s, nil
}

// serve accepts connections, each one MCP session, until the listener closes.
func (s *stack) serve(ctx context.Context, srv *mcpserver.Server) {
	defer close(s.served)
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed by close; the bench's own dials then fail and say so
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			srv.ServeConn(ctx, conn)
		}()
	}
}

func (s *stack) path() string { return s.ln.Path() }

// waitPool waits until the stack's warm pool is full (at once without one).
func (s *stack) waitPool(ctx context.Context) error {
	for ready, size := s.eng.PoolReady(); ready < size; ready, size = s.eng.PoolReady() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// close ends every session, removes the stack's sandboxes (all ephemeral)
// and its pool, and closes the engine, whatever state ctx is in.
func (s *stack) close(ctx context.Context) error {
	s.ln.Close()
	<-s.served
	s.cancel()
	s.conns.Wait()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	return errors.Join(s.eng.RemoveEphemeral(ctx), s.eng.Close(ctx))
}
