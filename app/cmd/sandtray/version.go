package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/sandtray/sandtray"
)

// commit is set at build time with -ldflags "-X main.commit=…" (make dist
// does), for builds where Go records no VCS information (-buildvcs=false).
var commit = ""

// versionString is the release version: -ldflags "-X main.version=…" when
// given, else FyneApp.toml's.
func versionString() string {
	if version != "" {
		return version
	}
	return sandtray.Version
}

// printVersion prints the version, the commit it was built from and the Go
// toolchain, e.g. "sandtray 0.1.0 (commit 07c57d9a1b2c, go1.26.8 linux/amd64)".
func printVersion(stdout io.Writer) error {
	commit := cmpOr(commit, cmpOr(sandtray.Commit(), "unknown"))
	_, err := fmt.Fprintf(stdout, "sandtray %s (commit %s, %s %s/%s)\n",
		versionString(), commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
