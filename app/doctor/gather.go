package doctor

import (
	"context"
	"path/filepath"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/serve/socket"
)

// gather loads the config (falling back to the defaults, so the other checks
// still run) and probes Docker the way the engine would find it.
func gather(ctx context.Context, opts Options) *Env {
	e := &Env{ConfigPath: opts.ConfigPath, SocketPath: opts.SocketPath}
	cfg, err := config.Load(opts.ConfigPath)
	if err != nil {
		e.ConfigErr = err
		cfg = config.Default()
	}
	cfg.ConfigDir = filepath.Dir(opts.ConfigPath)
	e.Config = cfg
	if e.SocketPath == "" {
		e.SocketPath, e.SocketErr = socket.Path()
	}
	e.Docker = engine.ProbeDocker(ctx, cfg)
	return e
}
