package doctor

import (
	"context"
	"path/filepath"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/runtime/kubernetes"
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
	if cfg.RuntimeName() == config.RuntimeKubernetes {
		o, err := kubernetes.ParseHost(cfg.RuntimeHost())
		if err != nil {
			e.Kubernetes = []kubernetes.Finding{{Level: kubernetes.FindingFail, Topic: "cluster", Detail: err.Error(), Fix: "correct [kubernetes] in config.toml"}}
			return e
		}
		e.Kubernetes = kubernetes.Diagnose(ctx, o, cfg.DefaultImage)
		// Docker is not probed: the runtime line names the cluster's.
		e.Docker.Runtime, e.Docker.Host = config.RuntimeKubernetes, "the cluster of [kubernetes] (the cluster line)"
		return e
	}
	e.Docker = engine.ProbeDocker(ctx, cfg)
	return e
}
