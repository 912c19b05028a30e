// Package host is Sandtray's composition root: it reads the config, sets up
// logging, starts the engine, serves MCP (on stdio or the unix socket) and
// shuts everything down in order: stop taking requests, then close the engine.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/adrg/xdg"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/mcpserver"
)

// Options say how to run Sandtray.
type Options struct {
	Version    string
	ConfigPath string // "" means config.toml in the xdg config dir
	Stdio      bool   // serve MCP on Stdin/Stdout instead of the socket
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer // diagnostics; never protocol bytes
}

// shutdownTimeout bounds removing ephemeral sandboxes at exit.
const shutdownTimeout = 30 * time.Second

// ConfigPath is where config.toml lives unless told otherwise.
func ConfigPath() string { return filepath.Join(xdg.ConfigHome, "sandtray", "config.toml") }

// StateDir holds sandbox state and activity logs.
func StateDir() string { return filepath.Join(xdg.StateHome, "sandtray") }

// Serve runs the engine and serves MCP until ctx is done or, with Stdio, the
// client closes stdin. It does not return before the engine has shut down.
func Serve(ctx context.Context, opts Options) error {
	log := slog.New(slog.NewTextHandler(opts.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfgPath := cmpOr(opts.ConfigPath, ConfigPath())
	cfg, err := engine.LoadConfig(cfgPath)
	if err != nil {
		return err
	}
	cfg.StateDir = StateDir()
	ensureDefaultRoot(cfg, log)
	eng, err := engine.New(ctx, cfg, engine.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("start engine: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		// Every session ends with the engine, so its ephemeral sandboxes go too.
		if err := eng.RemoveEphemeral(closeCtx); err != nil {
			log.Warn("remove ephemeral sandboxes", "err", err)
		}
		if err := eng.Close(closeCtx); err != nil {
			log.Warn("engine shutdown", "err", err)
		}
	}()
	srv := mcpserver.New(eng, mcpserver.Options{
		Version: opts.Version, MaxRequestBytes: cfg.Limits.MaxRequestBytes,
		Logger: log, Languages: engine.Languages(), LanguageAliases: engine.LanguageAliases(),
	})
	log.Info("sandtray engine ready", "version", opts.Version, "config", cfgPath, "state", cfg.StateDir)
	if opts.Stdio {
		err = srv.ServeStdio(ctx, opts.Stdin, opts.Stdout)
	} else {
		err = serveSocket(ctx, srv, log)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// ensureDefaultRoot creates ~/Sandtray when it is the configured host root,
// so copies to and from the host work out of the box.
func ensureDefaultRoot(cfg engine.Config, log *slog.Logger) {
	def := engine.DefaultConfig().Host.AllowedRoots
	if !slices.Equal(cfg.Host.AllowedRoots, def) {
		return
	}
	for _, r := range def {
		if err := os.MkdirAll(r, 0o700); err != nil {
			log.Warn("create the default host folder", "path", r, "err", err)
		}
	}
}

func cmpOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
