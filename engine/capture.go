package engine

import (
	"context"
	"slices"

	"github.com/sandtray/sandtray/engine/internal/capture"
	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/internal/jobs"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The capture tools (install_packages, commit_sandbox, export_dockerfile,
// diff_sandbox) are engine/internal/capture's; the engine resolves the
// sandbox, keeps it busy, and records the activity and the manifest.

// captureConfig is what capture needs of the configuration.
func (s *settings) captureConfig() capture.Config {
	return capture.Config{
		AllowNetwork: s.Sandbox.AllowNetwork, OutputBytes: s.Limits.OutputBytes,
		MaxTimeout: s.Limits.MaxExecTimeout.Duration, Private: run.PidDir, Protected: s.configuredImages(),
		CopyLimits: s.copyLimits(), ExportRecords: capture.RecordsIn(s.StateDir), Engine: s.engine,
	}
}

// captureTarget is the sandbox as capture sees it.
func (t boxTarget) captureTarget() capture.Target {
	e, b := t.e, t.b
	var pkgs []sandbox.Package
	e.locked(func() { pkgs = slices.Clone(b.state.Packages) })
	return capture.Target{Handle: t, Image: b.spec.Image,
		Language: b.spec.Language, Network: b.spec.Network, Env: b.spec.Env, Packages: pkgs,
		Hold:       func(ctx context.Context) (func(), error) { return e.holdForWindow(ctx, b) },
		InitIsOurs: func(ctx context.Context) (bool, error) { i, err := e.initOf(ctx, b); return i.Ours, err },
		Gate:       e.installGate(b),
		SignalInit: func(ctx context.Context, sig string) error { return e.signalInit(ctx, b, sig) },
		Installed: func(pkgs []sandbox.Package) { // saved at once, so a crash right after the install keeps the record
			e.changeState(b, "package manifest", func(st *boxState) { st.Packages = capture.MergePackages(st.Packages, pkgs) })
		}}
}

// boxRunner runs capture's processes in one sandbox, with execute.
type boxRunner struct {
	e *Engine
	b *box
}

// Run runs x under the same guard as every call (guarded): the disk
// watchdog, and the sandbox dying under it.
func (r boxRunner) Run(ctx context.Context, x capture.Exec) (capture.Ran, error) {
	ctx = installContext(ctx, r.b) // in while the install holds the sandbox
	work := r.e.guarded(r.b, func(ctx context.Context, o *run.Output) (run.Result, error) {
		return r.e.runner.Run(ctx, boxTarget{r.e, r.b}, run.Process{Cmd: x.Cmd, Env: x.Env, User: x.User, Workdir: x.Workdir, Timeout: x.Timeout, Stream: x.Stream, Out: o})
	})
	out, err := work(ctx, run.NewOutput(r.e.cfg().Limits.LogOutputBytes, nil, nil))
	out.Render()
	return capture.Ran{Result: out.Result, LogOut: out.LogOut, LogErr: out.LogErr}, err
}

// InstallPackages installs packages in a sandbox with the image's package
// manager (req.Manager, or the one auto picks) as root, and records the exact
// versions installed in the sandbox's manifest. A sandbox without the
// bridge network (none or egress) reaches the manager's package hosts
// through the egress gate, for this call only, on a channel of its own: no
// Docker network is attached at any point. Meanwhile new calls wait and its
// other processes are stopped (see capture's freeze.go and holdForInstall),
// as defence in depth.
// Output lines stream to progress. A failed or timed-out install is an error
// wrapping sandbox.ErrInvalid that quotes the end of the output.
func (e *Engine) InstallPackages(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.InstallRequest, progress sandbox.Progress) (sandbox.InstallResult, error) {
	if err := capture.CheckInstall(req); err != nil {
		return sandbox.InstallResult{}, err
	}
	timeout, err := jobs.Timeout(e.cfg().Limits, req.Timeout, true)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	defer e.release(b)
	unlock, err := e.lockInstall(ctx, b)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	defer unlock()
	// Everything the install starts in the sandbox is its own: it passes the
	// gates the install closes (enterCall, and engine/internal/execgate).
	ctx = installContext(ctx, b)
	return e.capture.Install(ctx, boxTarget{e, b}.captureTarget(), boxRunner{e, b}, req, timeout, progress, func(a sandbox.Activity) {
		a.Client = owner.Client
		e.record(b.id, a)
	})
}

// Packages returns a sandbox's package manifest: what install_packages
// installed, with exact versions, sorted by manager and name.
func (e *Engine) Packages(ctx context.Context, ref string) ([]sandbox.Package, error) {
	var pkgs []sandbox.Package
	err := e.withRef(ref, func(b *box) error {
		pkgs = append([]sandbox.Package{}, b.state.Packages...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pkgs, nil
}

// Commit saves a sandbox's filesystem as the image req.Image ("repo:tag";
// "latest" when no tag is given), under commit.namespace (see capture.Tag);
// the result names the real reference. It refuses a tag that exists unless
// req.Overwrite, moves only tags of this engine's own commits, and never writes
// to the sandbox's own base image or the configured images. The image is labelled with its source sandbox and the time,
// keeps its base image's command and user, and carries no label that would
// make its containers look managed by Sandtray. Docker pauses the sandbox
// while it copies the filesystem; progress hears before and after.
func (e *Engine) Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	if err := e.caps.Missing(runtime.CapCommit); err != nil {
		return sandbox.CommitResult{}, err
	}
	tag, err := capture.Tag(req.Image, e.cfg().Commit.Namespace)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	defer e.release(b)
	t := boxTarget{e, b}
	res, err := e.capture.Commit(ctx, t.captureTarget(), tag, req.Overwrite, progress)
	t.log("commit_sandbox", owner)(tag, err, res.ImageID)
	return res, err
}

// ExportDockerfile returns a Dockerfile that rebuilds the sandbox: FROM its
// base image, its env and workdir, RUN lines for the packages installed with
// pinned versions, the files added or changed (from a rootfs.tar build
// context) and RUN rm for files of the image it deleted. With hostPath, a
// folder under the allowed roots, it also writes Dockerfile, .dockerignore
// and rootfs.tar there (see SaveDockerfile for which folders are accepted).
func (e *Engine) ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) {
	if err := e.caps.Missing(runtime.CapCommit); err != nil { // the export is the diff's
		return sandbox.Export{}, err
	}
	dir := ""
	if hostPath != "" {
		var err error
		if dir, err = e.cfg().hostPath(hostPath, false); err != nil {
			return sandbox.Export{}, err
		}
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.Export, error) {
		return e.capture.Export(ctx, t.captureTarget(), dir, t.log("export_dockerfile", owner))
	})
}

// SaveDockerfile writes a sandbox's export (see ExportDockerfile) to hostDir,
// a folder the user picked in the app, so it skips the allowed-roots check.
// The folder must be new (its parent exists), empty, or hold an earlier
// Sandtray export, whose Dockerfile, .dockerignore and rootfs.tar are then
// replaced; anything else is refused with sandbox.ErrConflict.
func (e *Engine) SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error) {
	dir, err := hostfs.Picked(hostDir)
	if err != nil {
		return sandbox.Export{}, err
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.Export, error) {
		return e.capture.Export(ctx, t.captureTarget(), dir, t.log("export_dockerfile", appOwner))
	})
}

// Diff lists the paths added, changed and deleted in a sandbox against its
// image, limited to those under p when p is given.
func (e *Engine) Diff(ctx context.Context, owner sandbox.Owner, ref, p string) (sandbox.Diff, error) {
	if err := e.caps.Missing(runtime.CapCommit); err != nil {
		return sandbox.Diff{}, err
	}
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.Diff{}, err
	}
	defer e.release(b)
	return e.capture.Diff(ctx, boxTarget{e, b}.captureTarget(), p)
}
