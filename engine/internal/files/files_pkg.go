// Package files moves files in and out of a sandbox through Docker's
// archive API and lists its folders: write_file, read_file,
// make_directory, list_files, and the copies between the host and a
// sandbox (copy_to_sandbox, copy_from_sandbox, the app's save), whose host
// side is hostfs'. It never sees the engine: the sandbox is a Target value,
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
)

// Docker is what the file tools need from Docker.
type Docker interface {
	Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error)
	StatPath(ctx context.Context, id, path string) (runtime.PathStat, error)
	CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, runtime.PathStat, error)
	UserIDs(ctx context.Context, id, user string) (uid, gid int, err error)
}

// Target is the sandbox a file tool works in.
type Target struct {
	ID, Name string
	Workdir  string
	User     string // sandbox.user: who owns what the tools write; "" root
	// Gone turns the error of a Docker call on the sandbox into the
	// engine's answer when its container was removed behind its back.
	Gone func(error) error
}

func (t Target) gone(err error) error {
	if t.Gone == nil {
		return err
	}
	return t.Gone(err)
}

// Path makes p absolute, relative to the sandbox's workdir.
func (t Target) Path(p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(t.Workdir, p)
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
