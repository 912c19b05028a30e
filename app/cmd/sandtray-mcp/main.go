// Command sandtray-mcp is the stdio MCP server that assistants launch: it
// pipes stdin and stdout to the running Sandtray engine's socket, starting the
// engine when none answers. All the work is in package shim.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/sandtray/sandtray/app/shim"
	"github.com/sandtray/sandtray/serve/socket"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); without
// it the module version from the build info is shown.
var version = ""

func main() {
	showVersion := flag.Bool("version", false, "print the version and exit")
	socketPath := flag.String("socket", "", "engine socket (default: $"+socket.EnvSocket+
		" or the per-user runtime dir)")
	flag.Parse()
	if *showVersion {
		fmt.Println("sandtray-mcp", currentVersion())
		return
	}
	if err := run(*socketPath); err != nil {
		fmt.Fprintln(os.Stderr, "sandtray-mcp:", err)
		os.Exit(1)
	}
}

// run resolves the socket path and hands the process's stdio to the shim
// until the engine or the client goes away.
func run(socketPath string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if socketPath == "" {
		p, err := socket.Path()
		if err != nil {
			return err
		}
		socketPath = p
	}
	return shim.Run(ctx, shim.Options{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		SocketPath: socketPath,
	})
}

// currentVersion is the linked-in version, else the module's, else "devel".
func currentVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
