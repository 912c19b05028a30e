// Package host is Sandtray's composition root: it reads the config, sets up
// logging, starts the engine, serves MCP (on stdio or the unix socket), runs
// the GUI when there is one, and shuts everything down in order: stop taking
// requests, remove ephemeral sandboxes, then close the engine.
package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/adrg/xdg"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/mcpserver"
)

// Options say how to run Sandtray.
type Options struct {
	Version    string
	ConfigPath string // "" means config.toml in the xdg config dir
	Stdio      bool   // serve MCP on Stdin/Stdout instead of the socket
	HTTPListen string // serve MCP over HTTP on this host:port too (overrides http.listen)
	TokenPath  string // the HTTP token file; "" means httptoken.Path()
	StateDir   string // "" means StateDir()
	About      string // the app's version and commit, for Help → About
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

// core is a running engine with its MCP server.
type core struct {
	log    *slog.Logger
	eng    *engine.Engine
	srv    *mcpserver.Server
	http   *httpEndpoint // nil unless MCP over HTTP is on
	cancel context.CancelFunc
	done   chan struct{} // closed when the change announcer has exited
	// ctl is the control endpoint (`sandtray egress …`, an attached app);
	// stopControl ends it.
	ctl         *control.Server
	stopControl func()
	// reload reads the config file as the engine was started with it.
	reload func() (config.Config, error)
}

// start reads the config and starts the engine and the MCP server.
func start(ctx context.Context, opts Options) (*core, error) {
	log := slog.New(slog.NewTextHandler(opts.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfgPath := cmpOr(opts.ConfigPath, ConfigPath())
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, configError{err}
	}
	var web *httpEndpoint
	if cfg.HTTP.Listen != "" {
		if web, err = listenHTTP(cfg.HTTP, opts.TokenPath, log); err != nil {
			return nil, err
		}
	}
	ensureDefaultRoot(cfg, log)
	eng, err := engine.New(ctx, cfg, engine.Options{Logger: log, Labels: testLabels()})
	if err != nil {
		if web != nil {
			web.ln.Close()
		}
		return nil, fmt.Errorf("start engine: %w", err)
	}
	srv := mcpserver.New(eng, mcpserver.Options{
		Version: opts.Version, MaxRequestBytes: cfg.Limits.MaxRequestBytes,
		Logger: log, Languages: engine.Languages(), LanguageAliases: engine.LanguageAliases(),
	})
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &core{log: log, eng: eng, srv: srv, http: web, cancel: cancel, done: make(chan struct{}),
		reload: func() (config.Config, error) {
			cfg, err := loadConfig(opts)
			if err == nil {
				ensureDefaultRoot(cfg, log)
			}
			return cfg, err
		}}
	c.ctl, c.stopControl = serveControl(eng, log, cfgPath, opts.Stdio, c.reload)
	go func() {
		defer close(c.done)
		announceChanges(watchCtx, eng, srv)
	}()
	log.Info("sandtray engine ready", "version", opts.Version, "config", cfgPath, "state", cfg.StateDir)
	return c, nil
}

// configError is start's error when the config file is refused: the app
// shows it with the file (problem.go).
type configError struct{ error }

func (e configError) Unwrap() error { return e.error }

// loadConfig reads the config file as the engine runs with it: the state
// dir and a --http flag set over the file's values.
func loadConfig(opts Options) (config.Config, error) {
	cfg, err := config.Load(cmpOr(opts.ConfigPath, ConfigPath()))
	if err != nil {
		return config.Config{}, err
	}
	cfg.StateDir = cmpOr(opts.StateDir, StateDir())
	cfg.ConfigDir = filepath.Dir(cmpOr(opts.ConfigPath, ConfigPath()))
	cfg.HTTP.Listen = cmpOr(opts.HTTPListen, cfg.HTTP.Listen)
	return cfg, nil
}

// stop removes the ephemeral sandboxes (unless keepEphemeral: a person chose
// to keep them; they are reaped after their grace on the next start) and
// closes the engine.
func (c *core) stop(ctx context.Context, keepEphemeral bool) {
	c.cancel()
	<-c.done
	c.stopControl()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if !keepEphemeral {
		if err := c.eng.RemoveEphemeral(ctx); err != nil {
			c.log.Warn("remove ephemeral sandboxes", "err", err)
		}
	}
	if err := c.eng.Close(ctx); err != nil {
		c.log.Warn("engine shutdown", "err", err)
	}
}

// Serve runs the engine and serves MCP until ctx is done or, with Stdio, the
// client closes stdin. Every session ends with it, so its ephemeral
// sandboxes are removed before it returns.
func Serve(ctx context.Context, opts Options) error {
	var ln *listener
	if opts.Stdio {
		opts.Stdin = interruptible(opts.Stdin)
	} else {
		var err error
		if ln, err = listen(opts.Stderr); err != nil {
			return err
		}
		defer ln.Close()
	}
	c, err := start(ctx, opts)
	if err != nil {
		return err
	}
	var keep atomic.Bool // an attached app asked to restart the engine in it (control.MethodEngineStop)
	defer func() { c.stop(ctx, keep.Load()) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !opts.Stdio {
		c.ctl.Handle(control.MethodEngineStop, func(context.Context, json.RawMessage, func(any) error) (any, error) {
			c.log.Info("stopping, as the app asked: it starts the engine again itself; sandboxes stay")
			keep.Store(true)
			time.AfterFunc(100*time.Millisecond, cancel) // after the answer has gone out
			return struct{}{}, nil
		})
	}
	waitHTTP := c.serveHTTP(ctx, cancel)
	if opts.Stdio {
		err = c.srv.ServeStdio(ctx, opts.Stdin, opts.Stdout)
	} else {
		err = ln.serve(ctx, c.srv, c.log)
	}
	cancel()
	if herr := waitHTTP(); herr != nil {
		return herr
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// interruptible is in, as a reader whose Read ends when it is closed. A
// file in blocking mode (stdin from the client's pipe, or a terminal) is
// not woken by its Close, so a stop (SIGTERM) would wait for the client's
// next byte; a pipe in between is. The copy from the file is left blocked
// when the session ends that way: the process ends after.
func interruptible(in io.Reader) io.Reader {
	f, ok := in.(*os.File)
	if !ok {
		return in
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, f)
		pw.CloseWithError(err) // nil: EOF
	}()
	return pr
}

// ensureDefaultRoot creates ~/Sandtray when it is the configured host root,
// so copies to and from the host work out of the box.
func ensureDefaultRoot(cfg config.Config, log *slog.Logger) {
	def := config.Default().Host.AllowedRoots
	if !slices.Equal(cfg.Host.AllowedRoots, def) {
		return
	}
	for _, r := range def {
		if err := os.MkdirAll(r, 0o700); err != nil {
			log.Warn("create the default host folder", "path", r, "err", err)
		}
	}
}

// TestLabelEnv scopes an engine to the containers of one test run: they carry
// the label io.sandtray.test=<value>, and the engine touches no others. A
// user's engine, without it, never touches test containers.
const TestLabelEnv = "SANDTRAY_TEST_LABEL"

func testLabels() map[string]string {
	if v := os.Getenv(TestLabelEnv); v != "" {
		return map[string]string{sandbox.LabelTest: v}
	}
	return nil
}

func cmpOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
