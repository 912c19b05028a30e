package host

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/socket"
)

// controlBackend is the engine as the control endpoint sees it: the
// egress commands' methods and the window's (control.GUI). Only the
// methods whose types are the engine's own are written here.
type controlBackend struct {
	*engine.Engine
	// reload reads the config file again as the engine was started with it.
	reload func() (config.Config, error)
}

func (b controlBackend) Snapshots(ctx context.Context) control.Snapshots { return b.Engine.Watch(ctx) }

func (b controlBackend) ImageState(ctx context.Context, ref string) (control.ImageState, error) {
	st, err := b.Engine.ImageStateOf(ctx, ref)
	out := control.ImageState{Ref: st.Ref, Present: st.Present, Buildable: st.Builtin}
	if ref == "" || ref == b.Engine.Config().DefaultImage {
		if _, build, _ := b.Engine.DefaultImageState(ctx); build != nil {
			out.Build = b.progress(*build)
		}
	}
	return out, err
}

func (b controlBackend) BuildImage(ctx context.Context, progress func(control.ImageProgress)) error {
	return b.Engine.BuildDefaultImage(ctx, func(p engine.ImageBuildProgress) { progress(*b.progress(p)) })
}

// progress is a build's progress as a window shows it, with the engine's
// estimate of what it takes yet.
func (b controlBackend) progress(p engine.ImageBuildProgress) *control.ImageProgress {
	return &control.ImageProgress{Step: p.Step, Done: p.Done, Total: p.Total, Bytes: p.Bytes, Left: b.Engine.BuildLeft()}
}

func (b controlBackend) ApplySettings(ctx context.Context) ([]string, error) {
	cfg, err := b.reload()
	if err != nil {
		return nil, err
	}
	return b.Engine.Reconfigure(ctx, cfg)
}

func (b controlBackend) Busy() control.Busy {
	return control.Busy{Sessions: b.Engine.Sessions(), Calls: b.Engine.CallsRunning()}
}

var _ control.GUI = controlBackend{}

// serveControl serves the control endpoint (`sandtray egress …`, and the
// window's methods: the app's own window through an in-memory pipe, an
// attached app's over the socket) beside the MCP endpoint, private to the
// user like it, until stop. An endpoint that cannot be bound (another
// engine holds it) is logged: the engine works without it, and the user
// answers in that engine instead. The server is returned either way, for
// the engine's own window.
func serveControl(eng *engine.Engine, log *slog.Logger, configPath string, stdio bool, reload func() (config.Config, error)) (srv *control.Server, stop func()) {
	b := controlBackend{Engine: eng, reload: reload}
	srv = control.NewServer(b, log)
	srv.HandleGUI(b)
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

// WindowClient is a window's client of eng over an in-memory pipe, as the
// app that runs eng has it: the tests of the window against a real engine
// take the path the app takes. Settings cannot be applied through it.
func WindowClient(ctx context.Context, eng *engine.Engine) *control.GUIClient {
	b := controlBackend{Engine: eng, reload: func() (config.Config, error) {
		return config.Config{}, fmt.Errorf("this window has no config file to read: %w", sandbox.ErrUnsupported)
	}}
	srv := control.NewServer(b, nil)
	srv.HandleGUI(b)
	return control.NewGUIClient(ctx, srv.Pipe(ctx))
}

// ControlBackend is eng as the control endpoint serves it (for tests that
// serve the endpoint themselves).
func ControlBackend(eng *engine.Engine) control.GUI { return controlBackend{Engine: eng} }
