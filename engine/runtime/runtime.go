// Package runtime is the seam between the engine and a container runtime:
// the interface the engine needs (Runtime), in Sandtray's own vocabulary,
// and the plain types that cross it. It imports the standard library and
// engine/sandbox only, so nothing that uses it links a runtime's SDK.
//
// A runtime lives in a package of its own that registers a Connector under a
// name in its init function (engine/runtime/docker registers "docker", which
// serves Docker and Podman's Docker-compatible API). A program links the
// runtimes it offers by importing their packages, usually for their side
// effect only (import _ ".../engine/runtime/docker"); Connect then picks one.
// Only that package imports the runtime's SDK; an import test
// (app/host/imports_test.go) keeps it so.
//
// Runtime is the core every runtime provides (≤ 25 methods: containers,
// processes, files, stats, the daemon); what only some can do (images,
// builds, commits, networks, layer disk, pause…) is in optional interfaces
// (Imager, Committer, Pauser…) a runtime implements when it can. The engine
// finds them with CapabilitiesOf, does not offer what is missing, and
// reaches them through Complete, whose stand-ins for a missing part fail
// with an error naming the runtime and what it cannot do.
//
// Errors a runtime returns carry the kinds of engine/sandbox (ErrNotFound,
// ErrConflict, ErrInvalid, ErrForbidden, ErrUnavailable), so no caller ever
// inspects a runtime's own errors. What a runtime cannot do at all fails
// with sandbox.ErrUnsupported.
package runtime

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Runtime is what every container runtime can do: the core of the seam.
// It is safe for concurrent use. The groups it embeds say what each part is
// for. What only some runtimes can do (images, builds, commits, networks,
// layer disk, pause, renames, limit updates, GPUs, attach, export) is in the
// optional interfaces of optional.go, found with a type assertion or
// CapabilitiesOf; a runtime implements those it can.
type Runtime interface {
	Daemon
	Containers
	Processes
	Transfers
	Stats
}

// Daemon is the runtime itself: what it is, where it is, whether it answers.
type Daemon interface {
	// Name is the name the runtime registers under ("docker"), which the
	// config's [runtime] name chooses and messages name it by.
	Name() string
	// Close releases the runtime's connections.
	Close() error
	// Endpoint is where the runtime was reached, and why there.
	Endpoint() Endpoint
	// ServerVersion describes the runtime in a line, e.g. "20.10.24 (API 1.41)".
	ServerVersion(ctx context.Context) (string, error)
	// Daemon describes the runtime for diagnostics and feature checks.
	Daemon(ctx context.Context) (DaemonInfo, error)
	// Platform is the OS and architecture the runtime's containers run on.
	Platform(ctx context.Context) (osName, arch string, err error)
}

// Containers is the life of a sandbox's container, from create to remove.
type Containers interface {
	// Create creates a hardened container from o and returns its id. The
	// hardening that never varies (no capabilities, no new privileges, an
	// init, no restart, no mounts) is the runtime's own; o is what the user
	// may configure.
	Create(ctx context.Context, o CreateOptions) (string, error)
	Start(ctx context.Context, id string) error
	Stop(ctx context.Context, id string, timeout time.Duration) error
	Kill(ctx context.Context, id string) error
	// Signal sends sig ("SIGSTOP", "SIGCONT", …) to the container's PID 1.
	Signal(ctx context.Context, id, sig string) error
	Remove(ctx context.Context, id string) error
	Inspect(ctx context.Context, id string) (Container, error)
	// List lists the containers carrying every label of labels; all
	// includes those not running.
	List(ctx context.Context, labels map[string]string, all bool) ([]Container, error)
	// Events streams lifecycle events of containers with labels until ctx
	// ends; the error channel then says why, and both close.
	Events(ctx context.Context, labels map[string]string) (<-chan Event, <-chan error)
	// TmpfsMounts lists the container's tmpfs mount points.
	TmpfsMounts(ctx context.Context, id string) ([]string, error)
}

// Processes runs processes in a running container.
type Processes interface {
	// Exec runs o to its end and returns its exit code.
	Exec(ctx context.Context, id string, o ExecOptions) (int, error)
	// ExecStream starts cmd with its stdin and stdout as a byte stream.
	ExecStream(ctx context.Context, id, user string, cmd []string) (ExecConn, error)
	// UserIDs resolves user as the container's image has it.
	UserIDs(ctx context.Context, id, user string) (uid, gid int, err error)
}

// Transfers copies files into and out of a container as tar streams.
type Transfers interface {
	StatPath(ctx context.Context, id, path string) (PathStat, error)
	CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, PathStat, error)
}

// Stats samples a container's CPU, memory and processes.
type Stats interface {
	Stats(ctx context.Context, id string) (StatsSample, error)
	// StreamStats calls fn with each sample until ctx ends or the
	// container goes.
	StreamStats(ctx context.Context, id string, fn func(StatsSample)) error
}

// ExecConn is a process in a container with its stdin and stdout attached
// as a byte stream: Write feeds stdin, Read returns stdout, CloseWrite
// closes stdin while stdout keeps flowing. It carries a port forward's
// relay. Read and Write may be called from different goroutines.
type ExecConn interface {
	io.ReadWriteCloser
	CloseWrite() error
	// Started returns once the process runs, or why it did not start.
	Started(ctx context.Context) error
	// Stderr is the start of what the process wrote to stderr.
	Stderr() string
	// ExitCode waits for the process's end and returns its code.
	ExitCode(ctx context.Context) (int, error)
}

// Endpoint is where a runtime was reached, and why there.
type Endpoint struct {
	Host    string   // e.g. "unix:///var/run/docker.sock", "npipe:////./pipe/docker_engine", "ssh://me@box"
	Source  string   // where the address came from: "DOCKER_HOST", `docker context "colima"`, "Colima", …
	Why     string   // "set explicitly" or "the first that answered a ping"
	Skipped []string // candidates tried before it, each with the reason it was passed over
}

// String is the endpoint for a status line: "unix:///… (Colima: the first that answered a ping)".
func (e Endpoint) String() string {
	if e.Source == "" {
		return e.Host
	}
	return fmt.Sprintf("%s (%s: %s)", e.Host, e.Source, e.Why)
}

// Local reports whether the runtime runs on this host's kernel or in a VM
// of its own (a unix socket or a named pipe), as opposed to a remote one
// (ssh://, tcp://). Only then can a path the runtime reports be on this host.
func (e Endpoint) Local() bool {
	return strings.HasPrefix(e.Host, "unix://") || strings.HasPrefix(e.Host, "npipe://")
}

// Remote reports whether the runtime is reached over ssh or TCP: its files
// are never this host's.
func (e Endpoint) Remote() bool { return !e.Local() }

// NoEngineError is Connect's failure when no runtime answers, with what was
// tried, for a report that says it in a line (`sandtray doctor`). It wraps
// sandbox.ErrUnavailable.
type NoEngineError struct {
	Tried  []Tried // the endpoints that exist but did not answer, in order
	Pinned string  // where the one endpoint tried was named ("DOCKER_HOST", …), if it was
	Err    error
}

// Tried is an endpoint that did not answer and why.
type Tried struct{ Host, Source, Cause string }

func (e *NoEngineError) Error() string { return e.Err.Error() }
func (e *NoEngineError) Unwrap() error { return e.Err }

// A Connector reaches a runtime: host is where the user pinned it ("" to
// find one).
type Connector func(ctx context.Context, host string) (Runtime, error)

var (
	mu         sync.Mutex
	connectors = map[string]Connector{}
)

// Register makes a runtime available to Connect under name. It is meant for
// a runtime package's init; registering a name twice panics.
func Register(name string, c Connector) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := connectors[name]; ok {
		panic("runtime: " + name + " registered twice")
	}
	connectors[name] = c
}

// Default is the runtime Connect uses when more than one is linked in.
const Default = "docker"

// Connect reaches the runtime named name ("" for Default) at host.
func Connect(ctx context.Context, name, host string) (Runtime, error) {
	if name == "" {
		name = Default
	}
	mu.Lock()
	c, ok := connectors[name]
	names := make([]string, 0, len(connectors))
	for n := range connectors {
		names = append(names, n)
	}
	mu.Unlock()
	if !ok {
		sort.Strings(names)
		return nil, fmt.Errorf("no %q container runtime in this program (it has %q): set [runtime] name in config.toml to one of those, "+
			"or link the runtime's package in (e.g. import _ \"github.com/sandtray/sandtray/engine/runtime/docker\"): %w",
			name, names, sandbox.ErrUnsupported)
	}
	return c(ctx, host)
}
