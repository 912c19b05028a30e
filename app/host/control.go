package host

import (
	"context"
	"log/slog"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/control"
	"github.com/sandtray/sandtray/engine/socket"
)

// controlBackend is the engine as the control endpoint sees it.
type controlBackend struct{ *engine.Engine }

func (b controlBackend) Snapshots(ctx context.Context) control.Snapshots { return b.Engine.Watch(ctx) }

// serveControl serves the control endpoint (`sandtray egress …`, and an
// attached app's window: guiserve.go) beside the MCP endpoint, private to
// the user like it, until stop. An endpoint that cannot be bound (another
// engine holds it) is logged: the engine works without it, and the user
// answers in that engine instead. The server is returned either way, for
// the engine's own window to register with.
func serveControl(eng *engine.Engine, log *slog.Logger, configPath string, stdio bool, reload func() (config.Config, error)) (srv *control.Server, stop func()) {
	srv = control.NewServer(controlBackend{eng}, log)
	serveGUI(srv, eng, reload)
	mcpPath, err := socket.Path()
	if err != nil {
		log.Warn("control endpoint: no path", "err", err)
		return srv, func() {}
	}
	if stdio {
		srv.SetInfo(configPath, "")
	} else {
		srv.SetInfo(configPath, mcpPath)
	}
	path := control.Path(mcpPath)
	ln, err := socket.Listen(path, socket.WithLogger(log))
	if err != nil {
		log.Warn("control endpoint not served", "path", path, "err", err)
		return srv, func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Warn("control endpoint stopped", "err", err)
		}
	}()
	log.Info("serving the control endpoint", "socket", path)
	return srv, func() {
		cancel()
		<-done
		ln.Close()
	}
}
