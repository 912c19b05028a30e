package capture

import (
	"context"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/files"
	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/internal/jobs"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// ConfigOf is what capture needs of the configuration cfg, for the engine
// whose identity is engine.
func ConfigOf(cfg *config.Config, engine string) Config {
	return Config{
		AllowNetwork: cfg.Sandbox.AllowNetwork, OutputBytes: cfg.Limits.OutputBytes,
		MaxTimeout: cfg.Limits.MaxExecTimeout.Duration, Private: run.PidDir, Protected: cfg.ConfiguredImages(),
		CopyLimits: files.CopyLimits(cfg), ExportRecords: RecordsIn(cfg.StateDir), Engine: engine,
	}
}

// Host is what the capture tools need of the engine: its sandboxes (held as
// each tool needs), their manifests and activity logs, and the
// configuration in force.
type Host interface {
	// Acquire resolves the sandbox ref names and marks it busy until
	// release (a commit's, a diff's).
	Acquire(ref string) (t sandbox.Handle, release func(), err error)
	// Hold holds it as the file tools' work does (see files.Host): an
	// export's.
	Hold(ctx context.Context, ref string) (t sandbox.Handle, done func(), err error)
	// Install holds it for an install: busy, started, its install slot
	// taken (installs take turns). ctx comes back as the install's own: what
	// it starts in the sandbox passes the gates the install closes. The
	// Runner runs processes under the same guard as every call.
	Install(ctx context.Context, ref string) (context.Context, Target, Runner, func(), error)
	// Target is sandbox t, held by Acquire or Hold, as capture sees it.
	Target(t sandbox.Handle) Target
	// Packages is the manifest of the sandbox ref names.
	Packages(ref string) ([]sandbox.Package, error)
	// Record appends a to the activity log of sandbox id.
	Record(id string, a sandbox.Activity)
	// Config is the configuration in force.
	Config() *config.Config
}

// Service is the capture tools as the engine serves them: it resolves the
// sandbox through its Host, keeps it busy, runs the tool (Capture) and
// records the activity; an install also saves the manifest (Target's
// Installed). The engine embeds it, so its methods are the engine's.
type Service struct {
	capture *Capture
	caps    runtime.Capabilities
	host    Host
}

// NewService returns the capture tools of c, on the sandboxes of h, with a
// runtime that can do caps.
func NewService(c *Capture, caps runtime.Capabilities, h Host) *Service {
	return &Service{capture: c, caps: caps, host: h}
}

// log records in sandbox t's activity log what tool did for owner.
func (s *Service) log(t sandbox.Handle, tool string, owner sandbox.Owner) Log {
	return Log(files.LogTo(s.host.Record, t, tool, owner))
}

// InstallPackages installs packages in a sandbox with the image's package
// manager (req.Manager, or the one auto picks) as root, and records the exact
// versions installed in the sandbox's manifest. A sandbox without the
// bridge network (none or egress) reaches the manager's package hosts
// through the egress gate, for this call only, on a channel of its own: no
// Docker network is attached at any point. Meanwhile new calls wait and its
// other processes are stopped (see freeze.go and the engine's
// holdForInstall), as defence in depth.
// Output lines stream to progress. A failed or timed-out install is an error
// wrapping sandbox.ErrInvalid that quotes the end of the output.
func (s *Service) InstallPackages(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.InstallRequest, progress sandbox.Progress) (sandbox.InstallResult, error) {
	if err := CheckInstall(req); err != nil {
		return sandbox.InstallResult{}, err
	}
	timeout, err := jobs.Timeout(s.host.Config().Limits, req.Timeout, true) // timed as a background run
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	// Everything the install starts in the sandbox is its own: it passes the
	// gates the install closes (the engine's call gate, and
	// engine/internal/execgate).
	ctx, t, r, done, err := s.host.Install(ctx, ref)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	defer done()
	return s.capture.Install(ctx, t, r, req, timeout, progress, func(a sandbox.Activity) {
		a.Client = owner.Client
		s.host.Record(t.ID(), a)
	})
}

// Packages returns a sandbox's package manifest: what install_packages
// installed, with exact versions, sorted by manager and name.
func (s *Service) Packages(ctx context.Context, ref string) ([]sandbox.Package, error) {
	return s.host.Packages(ref)
}

// Commit saves a sandbox's filesystem as the image req.Image ("repo:tag";
// "latest" when no tag is given), under commit.namespace (see Tag);
// the result names the real reference. It refuses a tag that exists unless
// req.Overwrite, moves only tags of this engine's own commits, and never writes
// to the sandbox's own base image or the configured images. The image is labelled with its source sandbox and the time,
// keeps its base image's command and user, and carries no label that would
// make its containers look managed by Sandtray. Docker pauses the sandbox
// while it copies the filesystem; progress hears before and after.
func (s *Service) Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	if err := s.caps.Missing(runtime.CapCommit); err != nil {
		return sandbox.CommitResult{}, err
	}
	tag, err := Tag(req.Image, s.host.Config().Commit.Namespace)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	t, release, err := s.host.Acquire(ref)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	defer release()
	res, err := s.capture.Commit(ctx, s.host.Target(t), tag, req.Overwrite, progress)
	s.log(t, "commit_sandbox", owner)(tag, err, res.ImageID)
	return res, err
}

// ExportDockerfile returns a Dockerfile that rebuilds the sandbox: FROM its
// base image, its env and workdir, RUN lines for the packages installed with
// pinned versions, the files added or changed (from a rootfs.tar build
// context) and RUN rm for files of the image it deleted. With hostPath, a
// folder under the allowed roots, it also writes Dockerfile, .dockerignore
// and rootfs.tar there (see SaveDockerfile for which folders are accepted).
func (s *Service) ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) {
	if err := s.caps.Missing(runtime.CapCommit); err != nil { // the export is the diff's
		return sandbox.Export{}, err
	}
	dir := ""
	if hostPath != "" {
		var err error
		if dir, err = files.HostPath(s.host.Config(), hostPath, false); err != nil {
			return sandbox.Export{}, err
		}
	}
	return s.export(ctx, ref, dir, owner)
}

// SaveDockerfile writes a sandbox's export (see ExportDockerfile) to hostDir,
// a folder the user picked in the app, so it skips the allowed-roots check.
// The folder must be new (its parent exists), empty, or hold an earlier
// Sandtray export, whose Dockerfile, .dockerignore and rootfs.tar are then
// replaced; anything else is refused with sandbox.ErrConflict.
func (s *Service) SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error) {
	dir, err := hostfs.Picked(hostDir)
	if err != nil {
		return sandbox.Export{}, err
	}
	return s.export(ctx, ref, dir, files.AppOwner)
}

// export exports the sandbox ref names, held as a file tool's, to dir ("":
// none) for owner.
func (s *Service) export(ctx context.Context, ref, dir string, owner sandbox.Owner) (sandbox.Export, error) {
	t, done, err := s.host.Hold(ctx, ref)
	if err != nil {
		return sandbox.Export{}, err
	}
	defer done()
	return s.capture.Export(ctx, s.host.Target(t), dir, s.log(t, "export_dockerfile", owner))
}

// Diff lists the paths added, changed and deleted in a sandbox against its
// image, limited to those under p when p is given.
func (s *Service) Diff(ctx context.Context, owner sandbox.Owner, ref, p string) (sandbox.Diff, error) {
	if err := s.caps.Missing(runtime.CapCommit); err != nil {
		return sandbox.Diff{}, err
	}
	t, release, err := s.host.Acquire(ref)
	if err != nil {
		return sandbox.Diff{}, err
	}
	defer release()
	return s.capture.Diff(ctx, s.host.Target(t), p)
}
