// Package files moves files in and out of a sandbox through its agent
// (engine/internal/agentclient), as the sandbox's user, and lists its
// folders: write_file, read_file, make_directory, list_files, and the
// copies between the host and a sandbox (copy_to_sandbox,
// copy_from_sandbox, the app's save), whose host side is hostfs'. The
// agent reads and writes what that user may, on the container's own files
// and its tmpfs alike. It never sees the engine: the sandbox is a
// sandbox.Handle, and the activity log a Log.
package files

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker is what the file tools need of the container runtime: the
// sandbox's session with its agent, through the engine's exec gate, and the
// runtime's own archive of a path, which copies out of a sandbox faster
// than a process's output can (Docker's archive reads the container's
// files itself; for a path on a tmpfs, which it cannot see, the runtime
// runs the agent's tar).
type Docker interface {
	Agent(ctx context.Context, id string) (*agentclient.Session, error)
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, runtime.PathStat, error)
}

// Path makes p absolute, relative to sandbox t's workdir.
func Path(t sandbox.Handle, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(t.Workdir(), p)
}

// Config is what the file tools need of the engine's configuration.
type Config struct {
	// Limits bound one copy a model asks for (limits.max_copy_bytes and
	// limits.max_copy_files); the app's saves have none.
	Limits hostfs.Limits
	Log    *slog.Logger // where a failed clean-up is told
}

// Files runs the file tools. Create it with New.
type Files struct {
	docker Docker
	cfg    Config
}

// New returns the file tools on d.
func New(d Docker, cfg Config) *Files { return &Files{docker: d, cfg: cfg} }

// Log records a tool's work in the sandbox's activity log: input is what it
// worked on, detail what it moved, err how it ended.
type Log func(input string, err error, detail string)

// session is t's session with its agent, t started first when stopped.
func (f *Files) session(ctx context.Context, t sandbox.Handle) (*agentclient.Session, error) {
	if err := t.EnsureRunning(ctx); err != nil {
		return nil, err
	}
	s, err := f.docker.Agent(ctx, t.ID())
	if err != nil {
		return nil, t.Gone(fmt.Errorf("reach sandbox %s: %w", t.Name(), err))
	}
	return s, nil
}
