package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/sandtray/sandtray/engine/mcpserver"
	"github.com/sandtray/sandtray/engine/socket"
)

// serveSocket serves MCP on the per-user unix socket, one session per
// connection, so every client shares this engine. It does not return until
// ctx is done and every connection's session has ended.
func serveSocket(ctx context.Context, srv *mcpserver.Server, log *slog.Logger) error {
	path, err := socket.Path()
	if err != nil {
		return fmt.Errorf("MCP socket: %w", err)
	}
	ln, err := socket.Listen(path, socket.WithLogger(log))
	if err != nil {
		return fmt.Errorf("MCP socket: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer ln.Close()
	log.Info("serving MCP", "socket", path)

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
