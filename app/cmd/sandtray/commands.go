package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/bench"
	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/app/install"
)

func init() {
	register(command{names: []string{"serve"}, run: serve,
		usage: "serve [--stdio] [--config FILE]   run the engine; MCP on the private endpoint, or on stdin/stdout\n" +
			"        [--http HOST:PORT]                   also serve MCP over HTTP (/mcp, legacy /sse), behind the token"})
	register(command{names: []string{"install"}, run: installClient,
		usage: "install CLIENT [--print] [--http] add Sandtray to an MCP client's config (claude, claude-code, cursor, vscode)"})
	register(command{names: []string{"token"}, run: func(_ context.Context, args []string, e env) error { return runToken(args, e.stdout, e.stderr) },
		usage: "token [--rotate]                  print (or replace) the bearer token MCP over HTTP requires"})
	register(command{names: []string{"bench"}, run: runBench,
		usage: "bench [-n N] [-image IMAGE] [-idle 30s]  measure this machine: warm calls, new sandboxes, throughput"})
	register(command{names: []string{"autostart"}, run: func(_ context.Context, args []string, e env) error { return runAutostart(args, e.stdout) },
		usage: "autostart enable|disable|status   start the tray app at login (same as the tray's \"Start at login\")"})
	register(command{names: []string{"version", "--version", "-v"}, run: func(_ context.Context, _ []string, e env) error { return printVersion(e.stdout) },
		usage: "version                           print the version and the commit"})
}

// serve runs the engine without a window.
func serve(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	stdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout (one client) instead of the socket")
	config := fs.String("config", "", "config file (default: config.toml in the xdg config dir)")
	httpAddr := fs.String("http", "", "also serve MCP over HTTP on HOST:PORT (port 0 picks one); overrides http.listen")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return host.Serve(ctx, host.Options{Version: versionString(), ConfigPath: *config, Stdio: *stdio,
		HTTPListen: *httpAddr, Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr})
}

// installClient adds sandtray-mcp to a client's MCP config, or prints the
// snippet with --print.
func installClient(_ context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	print := fs.Bool("print", false, "print the config snippet instead of writing it")
	shim := fs.String("shim", "", "absolute path of sandtray-mcp (default: next to this binary)")
	useHTTP := fs.Bool("http", false, "configure the client to reach Sandtray over HTTP (URL and token) instead of launching the shim")
	url := fs.String("url", "", "with --http: the URL (default: from http.listen in config.toml)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("install needs a client: one of %s", strings.Join(install.Clients(), ", "))
	}
	client := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	shimPath := *shim
	if shimPath == "" && !*useHTTP {
		p, err := install.DefaultShimPath()
		if err != nil {
			return err
		}
		shimPath = p
	}
	opts := install.Options{ShimPath: shimPath, Print: *print}
	if *useHTTP {
		target, err := httpTarget(*url)
		if err != nil {
			return err
		}
		opts.HTTP = target
	}
	res, err := install.Install(client, opts)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, res.String())
	return nil
}

// runBench measures this machine with engines of its own (the user's engine
// and sandboxes are untouched) and prints one table; progress goes to stderr.
func runBench(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	n := fs.Int("n", 100, "timed calls per figure (new sandboxes: n/5, at least 3)")
	image := fs.String("image", "", "sandbox image (default: the config's default image)")
	configPath := fs.String("config", "", "config file whose limits to use (default: config.toml in the xdg config dir)")
	idle := fs.Duration("idle", 30*time.Second, "how long to measure idle CPU with 50 sandboxes, window closed and open (0 skips the idle CPU and RSS figures)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(cmpOr(*configPath, host.ConfigPath()))
	if err != nil {
		return err
	}
	rep, err := bench.Run(ctx, bench.Options{N: *n, Image: *image, Config: &cfg, Progress: e.stderr, Idle: *idle})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprint(e.stdout, rep.Table())
	return nil
}
