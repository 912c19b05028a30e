package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"

	"github.com/sandtray/sandtray/serve/socket"
)

// listener is the bound per-user MCP socket.
type listener struct{ *socket.Listener }

// listen binds the socket before anything else starts, so a second Sandtray
// fails at once with "another Sandtray is running".
func listen(stderr io.Writer) (*listener, error) {
	path, err := socket.Path()
	if err != nil {
		return nil, fmt.Errorf("MCP socket: %w", err)
	}
	ln, err := socket.Listen(path, socket.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))))
	if err != nil {
		return nil, fmt.Errorf("MCP socket: %w", err)
	}
	return &listener{ln}, nil
}

// connServer serves one connection: the MCP server, or the gate in front
// of it (gate.go).
type connServer interface {
	ServeConn(ctx context.Context, conn io.ReadWriteCloser) error
}

// serve serves MCP on the socket, one session per connection, so every
// client shares this engine. It does not return until ctx is done (or the
// listener fails) and every connection's session has ended.
func (ln *listener) serve(ctx context.Context, srv connServer, log *slog.Logger) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	log.Info("serving MCP", "socket", ln.Path())
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		conn, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("MCP socket: %w", err)
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			if err := srv.ServeConn(ctx, conn); err != nil && ctx.Err() == nil {
				log.Warn("MCP connection ended", "err", err)
			}
		}()
	}
}
