package host

import (
	"context"
	"log/slog"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/control"
	"github.com/sandtray/sandtray/engine/socket"
)

// controlBackend is the engine as the control endpoint sees it.
type controlBackend struct{ *engine.Engine }

func (b controlBackend) Snapshots(ctx context.Context) control.Snapshots { return b.Engine.Watch(ctx) }

// serveControl serves the control endpoint (`sandtray egress …`) beside
// the MCP endpoint, private to the user like it, until stop. An endpoint
// that cannot be bound (another engine holds it) is logged: the engine
// works without it, and the user answers in that engine instead.
func serveControl(eng *engine.Engine, log *slog.Logger) (stop func()) {
	mcpPath, err := socket.Path()
	if err != nil {
		log.Warn("control endpoint: no path", "err", err)
		return func() {}
	}
	path := control.Path(mcpPath)
	ln, err := socket.Listen(path, socket.WithLogger(log))
	if err != nil {
		log.Warn("control endpoint not served", "path", path, "err", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := control.NewServer(controlBackend{eng}, log).Serve(ctx, ln); err != nil {
			log.Warn("control endpoint stopped", "err", err)
		}
	}()
	log.Info("serving the control endpoint", "socket", path)
	return func() {
		cancel()
		<-done
		ln.Close()
	}
}
