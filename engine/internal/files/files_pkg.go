// Package files moves files in and out of a sandbox through Docker's
// archive API and lists its folders: write_file, read_file,
// make_directory, list_files, and the copies between the host and a
// sandbox (copy_to_sandbox, copy_from_sandbox, the app's save), whose host
// side is hostfs'. It never sees the engine: the sandbox is a sandbox.Handle,
// and the activity log a Log.
package files

import (
	"context"
	"io"
	"log/slog"
	"path"
	"strings"

	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker is what the file tools need of the container runtime.
type Docker interface {
	Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error)
	StatPath(ctx context.Context, id, path string) (runtime.PathStat, error)
	CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, runtime.PathStat, error)
	UserIDs(ctx context.Context, id, user string) (uid, gid int, err error)
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

// execOptions is a plain exec of the engine's own helpers, both streams to out.
func execOptions(cmd []string, out io.Writer) runtime.ExecOptions {
	return runtime.ExecOptions{Cmd: cmd, Stdout: out, Stderr: out}
}
