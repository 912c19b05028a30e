package files

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Host is what the file tools need of the engine: its sandboxes, their
// activity logs and the configuration in force.
type Host interface {
	// Hold resolves the sandbox ref names and holds it for a tool whose
	// work counts as a call (the file, copy and export tools): it waits
	// while an install holds the sandbox online, an install waits for it,
	// and the disk watch between calls leaves the sandbox alone meanwhile.
	// done releases all of it.
	Hold(ctx context.Context, ref string) (t sandbox.Handle, done func(), err error)
	// Record appends a to the activity log of sandbox id.
	Record(id string, a sandbox.Activity)
	// Config is the configuration in force (Reconfigure replaces it whole).
	Config() *config.Config
}

// Service is the file tools as the engine serves them: it resolves the
// sandbox through its Host, keeps it busy, runs the tool (Files) and
// records the activity. The engine embeds it, so its methods are the
// engine's.
type Service struct {
	files *Files
	host  Host
}

// NewService returns the file tools of f, on the sandboxes of h.
func NewService(f *Files, h Host) *Service { return &Service{files: f, host: h} }

// AppOwner is who the app's own calls (its save dialogs) are logged for.
var AppOwner = sandbox.Owner{Client: "Sandtray app"}

// CopyLimits are the limits on what one copy a model asks for may move.
func CopyLimits(cfg *config.Config) hostfs.Limits {
	return hostfs.Limits{MaxBytes: cfg.Limits.MaxCopyBytes, MaxFiles: cfg.Limits.MaxCopyFiles}
}

// HostPath resolves a host path a model named under the allowed roots (see
// hostfs.Roots.Resolve).
func HostPath(cfg *config.Config, p string, mustExist bool) (string, error) {
	return hostfs.Roots(cfg.Host.AllowedRoots).Resolve(p, mustExist)
}

// LogTo is a Log that records in sandbox t's activity log, through
// record, what tool did for owner.
func LogTo(record func(string, sandbox.Activity), t sandbox.Handle, tool string, owner sandbox.Owner) Log {
	return func(input string, err error, detail string) {
		a := sandbox.Activity{Tool: tool, Client: owner.Client, Input: input, Stdout: detail}
		if err != nil {
			a.Error = err.Error()
		}
		record(t.ID(), a)
	}
}

// hold runs do on the sandbox ref names, held by Host.Hold. It is a
// function because methods have no type parameters.
func hold[T any](ctx context.Context, s *Service, ref string, do func(sandbox.Handle) (T, error)) (T, error) {
	t, done, err := s.host.Hold(ctx, ref)
	if err != nil {
		var none T
		return none, err
	}
	defer done()
	return do(t)
}

// log is LogTo on the host's activity logs.
func (s *Service) log(t sandbox.Handle, tool string, owner sandbox.Owner) Log {
	return LogTo(s.host.Record, t, tool, owner)
}

// WriteFile writes one file into a sandbox, creating missing parent folders.
func (s *Service) WriteFile(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.WriteRequest) (sandbox.FileContent, error) {
	if err := CheckWrite(req); err != nil {
		return sandbox.FileContent{}, err
	}
	return hold(ctx, s, ref, func(t sandbox.Handle) (sandbox.FileContent, error) {
		return s.files.WriteFile(ctx, t, req, s.log(t, "write_file", owner))
	})
}

// MakeDirectory creates a folder (and its parents) inside a sandbox.
func (s *Service) MakeDirectory(ctx context.Context, owner sandbox.Owner, ref, p string) (string, error) {
	if err := CheckMkdir(p); err != nil {
		return "", err
	}
	return hold(ctx, s, ref, func(t sandbox.Handle) (string, error) {
		return s.files.MakeDirectory(ctx, t, p, s.log(t, "make_directory", owner))
	})
}

// ReadFile reads up to limit bytes of a file from offset (limit <= 0 means
// the configured maximum). A symlink is followed inside the sandbox.
func (s *Service) ReadFile(ctx context.Context, owner sandbox.Owner, ref, p string, offset, limit int64) (sandbox.FileContent, error) {
	limit, err := CheckRead(offset, limit, s.host.Config().Limits.ReadFileBytes)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	return hold(ctx, s, ref, func(t sandbox.Handle) (sandbox.FileContent, error) {
		return s.files.Read(ctx, t, Path(t, p), offset, limit)
	})
}

// ListFiles lists a folder inside a sandbox to depth levels (1: just its
// entries). Hidden entries are skipped unless all is set.
func (s *Service) ListFiles(ctx context.Context, owner sandbox.Owner, ref, p string, depth int, all bool) (sandbox.Listing, error) {
	if err := CheckList(depth); err != nil {
		return sandbox.Listing{}, err
	}
	if p == "" {
		p = "."
	}
	return hold(ctx, s, ref, func(t sandbox.Handle) (sandbox.Listing, error) {
		return s.files.List(ctx, t, Path(t, p), depth, all)
	})
}

// The copies between the host and a sandbox: the sandbox's side is Files',
// the host's hostfs'; the host path is resolved under the allowed roots
// (a model's copies) or must be absolute (a person's, in the app).

// CopyToSandbox copies a host file or folder (under the allowed roots) into a
// sandbox. dest "" means the workdir; an existing folder receives the source
// by its own name; any other dest is the new name. Host symlinks are copied
// as links, never followed, so nothing outside the roots is read.
func (s *Service) CopyToSandbox(ctx context.Context, owner sandbox.Owner, ref, hostPath, dest string) (sandbox.CopyResult, error) {
	src, err := HostPath(s.host.Config(), hostPath, true)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	if err := s.files.CheckSource(src); err != nil {
		return sandbox.CopyResult{}, err
	}
	return hold(ctx, s, ref, func(t sandbox.Handle) (sandbox.CopyResult, error) {
		return s.files.CopyIn(ctx, t, src, dest, s.log(t, "copy_to_sandbox", owner))
	})
}

// CopyFromSandbox copies a sandbox file or folder to the host, under the
// allowed roots. An existing host folder receives it by its own name; any
// other host_path is the new name, and must not exist: nothing on the host is
// overwritten. Symlinks, devices and names that would escape are skipped and
// reported; files are created through an os.Root, which refuses to follow any
// symlink out of the destination, even one swapped in during the copy.
func (s *Service) CopyFromSandbox(ctx context.Context, owner sandbox.Owner, ref, p, hostPath string) (sandbox.CopyResult, error) {
	dst, err := HostPath(s.host.Config(), hostPath, false)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	return hold(ctx, s, ref, func(t sandbox.Handle) (sandbox.CopyResult, error) {
		return s.files.CopyOut(ctx, t, p, dst, s.log(t, "copy_from_sandbox", owner))
	})
}

// SaveFiles copies a sandbox file or folder to a host path a person picked
// in the GUI's save dialog: the allowed roots bind what models ask for, not
// what the user chooses. Every other rule of CopyFromSandbox holds.
func (s *Service) SaveFiles(ctx context.Context, ref, p, hostPath string) (sandbox.CopyResult, error) {
	if !filepath.IsAbs(hostPath) {
		return sandbox.CopyResult{}, fmt.Errorf("host path %q must be absolute: %w", hostPath, sandbox.ErrInvalid)
	}
	return hold(ctx, s, ref, func(t sandbox.Handle) (sandbox.CopyResult, error) {
		return s.files.Save(ctx, t, p, filepath.Clean(hostPath), s.log(t, "copy_from_sandbox", AppOwner))
	})
}
