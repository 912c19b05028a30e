// Command sandtray runs Sandtray: the engine that manages code sandboxes for
// AI assistants and serves them the Model Context Protocol.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"fyne.io/fyne/v2/app"

	"github.com/sandtray/sandtray/app/bench"
	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/engine"
)

// appID names the app to the desktop (notifications, preferences); it
// matches FyneApp.toml.
const appID = "io.sandtray.app"

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

const usage = `usage:
  sandtray                                   the tray app: engine, MCP socket and window (serve without a display)
  sandtray serve [--stdio] [--config FILE]   run the engine; MCP on the socket, or on stdin/stdout
  sandtray install CLIENT [--print]          add Sandtray to an MCP client's config (claude, claude-code, cursor, vscode)
  sandtray bench [-n N] [-image IMAGE]       measure this machine: warm calls, new sandboxes, throughput
  sandtray version                           print the version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sandtray:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		if !hasDisplay() {
			fmt.Fprintln(stderr, "sandtray: no display answers (DISPLAY, WAYLAND_DISPLAY); running the engine without its window (sandtray serve)")
			return host.Serve(ctx, host.Options{Version: versionString(), Stdin: stdin, Stdout: stdout, Stderr: stderr})
		}
		return host.RunGUI(ctx, app.NewWithID(appID), host.Options{Version: versionString(), Stderr: stderr})
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(stderr)
		stdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout (one client) instead of the socket")
		config := fs.String("config", "", "config file (default: config.toml in the xdg config dir)")
		if err := fs.Parse(args); err != nil {
			return err
		}
		return host.Serve(ctx, host.Options{Version: versionString(), ConfigPath: *config, Stdio: *stdio,
			Stdin: stdin, Stdout: stdout, Stderr: stderr})
	case "install":
		return installClient(args, stdout, stderr)
	case "bench":
		return runBench(ctx, args, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "sandtray", versionString())
		return nil
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// installClient adds sandtray-mcp to a client's MCP config, or prints the
// snippet with --print.
func installClient(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	print := fs.Bool("print", false, "print the config snippet instead of writing it")
	shim := fs.String("shim", "", "absolute path of sandtray-mcp (default: next to this binary)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("install needs a client: one of %s", strings.Join(install.Clients(), ", "))
	}
	client := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	shimPath := *shim
	if shimPath == "" {
		p, err := install.DefaultShimPath()
		if err != nil {
			return err
		}
		shimPath = p
	}
	res, err := install.Install(client, install.Options{ShimPath: shimPath, Print: *print})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, res.String())
	return nil
}

// runBench measures this machine with engines of its own (the user's engine
// and sandboxes are untouched) and prints one table; progress goes to stderr.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 100, "timed calls per figure (new sandboxes: n/5, at least 3)")
	image := fs.String("image", "", "sandbox image (default: the config's default image)")
	config := fs.String("config", "", "config file whose limits to use (default: config.toml in the xdg config dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := engine.LoadConfig(cmpOr(*config, host.ConfigPath()))
	if err != nil {
		return err
	}
	rep, err := bench.Run(ctx, bench.Options{N: *n, Image: *image, Config: &cfg, Progress: stderr})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprint(stdout, rep.Table())
	return nil
}

func cmpOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
