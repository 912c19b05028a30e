// Command sandtray runs Sandtray: the engine that manages code sandboxes for
// AI assistants and serves them the Model Context Protocol.
//
// Built with cgo it is the tray app (engine, MCP endpoint and window);
// built without cgo it is the same engine without a window, as if every
// start were `sandtray serve` (see window_cgo.go and window_nocgo.go).
// Subcommands live in a table: a new one is a new file whose init calls
// register.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/sandtray/sandtray/app/host"
	// The runtimes this program offers: Docker (and Podman through its
	// API), the default, which alone links the Docker SDK; and Kubernetes
	// (runtime.name = "kubernetes"), which alone links client-go.
	_ "github.com/sandtray/sandtray/engine/runtime/docker"
	_ "github.com/sandtray/sandtray/engine/runtime/kubernetes"
)

// appID names the app to the desktop (notifications, preferences); it
// matches FyneApp.toml.
const appID = "io.sandtray.app"

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

// env is what a subcommand may use of the process: its streams. Tests pass
// their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand: its names (the first is the one shown), one
// usage line (without the leading "sandtray ") and what it does.
type command struct {
	names []string
	usage string
	run   func(ctx context.Context, args []string, e env) error
}

// commands is the subcommand table, in the order the usage lists them.
var commands []command

// register adds a subcommand; files call it from init. A name used twice is
// a programming error, caught by any test of this package.
func register(c command) {
	for _, n := range c.names {
		if _, ok := lookup(n); ok {
			panic("sandtray: subcommand " + n + " registered twice")
		}
	}
	commands = append(commands, c)
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if slices.Contains(c.names, name) {
			return c, true
		}
	}
	return command{}, false
}

// usage lists every subcommand, one per line.
func usage() string {
	var b strings.Builder
	b.WriteString("usage:\n  sandtray                                   the tray app: engine, MCP endpoint and window (serve without a display)\n")
	for _, c := range commands {
		if c.usage != "" {
			fmt.Fprintf(&b, "  sandtray %s\n", c.usage)
		}
	}
	return b.String()
}

func init() {
	register(command{names: []string{"help", "--help", "-h"}, run: func(_ context.Context, _ []string, e env) error {
		fmt.Fprint(e.stdout, usage())
		return nil
	}})
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if msg := err.Error(); msg != "" { // a command that has said why prints nothing more
			fmt.Fprintln(os.Stderr, "sandtray:", msg)
		}
		os.Exit(exitCode(err))
	}
}

// exitCoder is an error that chooses the process's exit status (doctor's
// "cannot work" is 1, as any failure, but a command may pick another).
type exitCoder interface{ ExitCode() int }

func exitCode(err error) int {
	if ec, ok := err.(exitCoder); ok {
		return ec.ExitCode()
	}
	return 1
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		return runDefault(ctx, e)
	}
	c, ok := lookup(args[0])
	if !ok {
		return fmt.Errorf("unknown command %q\n%s", args[0], usage())
	}
	return c.run(ctx, args[1:], e)
}

// runDefault is `sandtray` alone: the window when this build has one and a
// display answers, else the engine without it.
func runDefault(ctx context.Context, e env) error {
	opts := host.Options{Version: versionString(), Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr}
	if !windowBuilt {
		fmt.Fprintln(e.stderr, "sandtray: this build has no window (built without cgo); running the engine (sandtray serve)")
		return host.Serve(ctx, opts)
	}
	if !hasDisplay() {
		fmt.Fprintln(e.stderr, "sandtray: no display answers (DISPLAY, WAYLAND_DISPLAY); running the engine without its window (sandtray serve)")
		return host.Serve(ctx, opts)
	}
	return runWindow(ctx, opts)
}

func cmpOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
