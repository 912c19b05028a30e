package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The copies between the host and a sandbox are engine/internal/files' (the
// sandbox's side) and hostfs' (the host's); the engine resolves the host
// path under the allowed roots and the sandbox, keeps it busy and records
// the activity.

// copyLimits are the limits on what one copy a model asks for may move.
func (s *settings) copyLimits() hostfs.Limits {
	return hostfs.Limits{MaxBytes: s.Limits.MaxCopyBytes, MaxFiles: s.Limits.MaxCopyFiles}
}

// hostPath resolves a host path a model named under the allowed roots (see
// hostfs.Roots.Resolve).
func (s *settings) hostPath(p string, mustExist bool) (string, error) {
	return hostfs.Roots(s.Host.AllowedRoots).Resolve(p, mustExist)
}

// CopyToSandbox copies a host file or folder (under the allowed roots) into a
// sandbox. dest "" means the workdir; an existing folder receives the source
// by its own name; any other dest is the new name. Host symlinks are copied
// as links, never followed, so nothing outside the roots is read.
func (e *Engine) CopyToSandbox(ctx context.Context, owner sandbox.Owner, ref, hostPath, dest string) (sandbox.CopyResult, error) {
	src, err := e.cfg().hostPath(hostPath, true)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	if err := e.files.CheckSource(src); err != nil {
		return sandbox.CopyResult{}, err
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.CopyResult, error) {
		return e.files.CopyIn(ctx, t, src, dest, t.log("copy_to_sandbox", owner))
	})
}

// CopyFromSandbox copies a sandbox file or folder to the host, under the
// allowed roots. An existing host folder receives it by its own name; any
// other host_path is the new name, and must not exist: nothing on the host is
// overwritten. Symlinks, devices and names that would escape are skipped and
// reported; files are created through an os.Root, which refuses to follow any
// symlink out of the destination, even one swapped in during the copy.
func (e *Engine) CopyFromSandbox(ctx context.Context, owner sandbox.Owner, ref, p, hostPath string) (sandbox.CopyResult, error) {
	dst, err := e.cfg().hostPath(hostPath, false)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.CopyResult, error) {
		return e.files.CopyOut(ctx, t, p, dst, t.log("copy_from_sandbox", owner))
	})
}

// SaveFiles copies a sandbox file or folder to a host path a person picked
// in the GUI's save dialog: the allowed roots bind what models ask for, not
// what the user chooses. Every other rule of CopyFromSandbox holds.
func (e *Engine) SaveFiles(ctx context.Context, ref, p, hostPath string) (sandbox.CopyResult, error) {
	if !filepath.IsAbs(hostPath) {
		return sandbox.CopyResult{}, fmt.Errorf("host path %q must be absolute: %w", hostPath, sandbox.ErrInvalid)
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.CopyResult, error) {
		return e.files.Save(ctx, t, p, filepath.Clean(hostPath), t.log("copy_from_sandbox", appOwner))
	})
}
