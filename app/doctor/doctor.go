// Package doctor checks whether Sandtray can work on this machine and says
// how to fix what stops it: `sandtray doctor` prints the report, and the tray
// app shows it under Help → Diagnose.
//
// Each check is a small function in the checks list (checks.go); a feature
// adds its own line there.
package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/runtime/kubernetes"
)

// Level is how a line of the report reads.
type Level int

// The levels, from fine to fatal. Only Fail means Sandtray cannot work.
const (
	OK   Level = iota // works
	Info              // not in use, or nothing to do
	Warn              // works, but something a person should know or fix
	Fail              // Sandtray cannot work until it is fixed
)

// mark is each level's sign in the report.
func (l Level) mark() string {
	return [...]string{"ok  ", "--  ", "warn", "FAIL"}[l]
}

// Line is one line of the report.
type Line struct {
	Level  Level
	Topic  string // e.g. "docker", "socket"
	Detail string // what was found
	Fix    string // what to do, when Level is Warn or Fail
}

// Env is what the checks look at, gathered once: the config and Docker.
type Env struct {
	ConfigPath string
	Config     config.Config // the defaults where the file is missing or invalid
	ConfigErr  error
	Docker     engine.DockerProbe
	// Kubernetes is what the cluster's checks found, when runtime.name is
	// "kubernetes" (Docker is then not probed).
	Kubernetes []kubernetes.Finding
	SocketPath string
	SocketErr  error
	TokenPath  string          // the HTTP bearer token; "" means httptoken.Path()
	Clients    install.Options // where the MCP clients' configs are: the zero value is this user's
}

// check is one item of the report; it may add several lines (one per client).
type check func(ctx context.Context, e *Env) []Line

// Options say where the config is.
type Options struct {
	ConfigPath string // config.toml
	SocketPath string // the private endpoint; "" means socket.Path()
}

// Report is the result of every check, in order.
type Report struct{ Lines []Line }

// OK reports whether Sandtray can work: no line failed.
func (r Report) OK() bool {
	for _, l := range r.Lines {
		if l.Level == Fail {
			return false
		}
	}
	return true
}

// String renders the report, one line per finding with its fix, and a last
// line that sums it up: the report's only summary.
func (r Report) String() string {
	var b strings.Builder
	for _, l := range r.Lines {
		fmt.Fprintf(&b, "%s  %-8s %s", l.Level.mark(), l.Topic, l.Detail)
		if l.Fix != "" && l.Level >= Warn {
			fmt.Fprintf(&b, " — fix: %s", l.Fix)
		}
		b.WriteByte('\n')
	}
	if r.OK() {
		b.WriteString("Sandtray can work on this machine.\n")
	} else {
		n := 0
		for _, l := range r.Lines {
			if l.Level == Fail {
				n++
			}
		}
		if n == 1 {
			b.WriteString("Sandtray cannot work until the FAIL line is fixed.\n")
		} else {
			fmt.Fprintf(&b, "Sandtray cannot work until the %d FAIL lines are fixed.\n", n)
		}
	}
	return b.String()
}

// Run gathers the environment and runs every check. It creates nothing:
// no container, no socket, no file.
func Run(ctx context.Context, opts Options) Report {
	e := gather(ctx, opts)
	var r Report
	for _, c := range checks {
		r.Lines = append(r.Lines, c(ctx, e)...)
	}
	return r
}
