package capture

import (
	"context"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// API is what this part gives the Engine's callers: the capture tools
// (installs, commit, diff, Dockerfile export). Package engine promotes these
// methods, and only these, onto *engine.Engine; the rest of the part's
// exported methods are the engine's centre's to call.
type API interface {
	InstallPackages(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.InstallRequest, progress sandbox.Progress) (sandbox.InstallResult, error)
	Packages(ctx context.Context, ref string) ([]sandbox.Package, error)
	Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error)
	ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error)
	SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error)
	Diff(ctx context.Context, owner sandbox.Owner, ref, p string) (sandbox.Diff, error)
}
