package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sandtray/sandtray/engine/internal/capture"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The capture tools (install_packages, commit_sandbox, export_dockerfile,
// diff_sandbox) are engine/internal/capture's; the engine resolves the
// sandbox, keeps it busy, and records the activity and the manifest.

// newCapture returns the engine's capture tools.
func (e *Engine) newCapture() *capture.Capture {
	return capture.New(e.docker, capture.Config{
		AllowNetwork: e.cfg.Sandbox.AllowNetwork, OutputBytes: e.cfg.Limits.OutputBytes,
		MaxTimeout: e.cfg.Limits.MaxExecTimeout.Duration, Private: run.PidDir,
		Protected: e.cfg.configuredImages(), CopyLimits: e.copyLimits(), ExportRecords: e.exportRecords(),
	}, e.log)
}

// captureTarget is b as capture sees it.
func (e *Engine) captureTarget(b *box) capture.Target {
	e.mu.Lock()
	pkgs := slices.Clone(b.state.Packages)
	e.mu.Unlock()
	return capture.Target{ID: b.id, Name: b.name, Image: b.spec.Image, Workdir: b.spec.Workdir,
		Language: b.spec.Language, Network: b.spec.Network, Env: b.spec.Env, Packages: pkgs,
		Gone:  func(err error) error { return e.gone(b, err) },
		Hold:  func(ctx context.Context) (func(), error) { return e.holdForInstall(ctx, b) },
		Execs: func() int { return e.execEnv.execsIn(b.id) }}
}

// boxRunner runs capture's processes in one sandbox, with execute.
type boxRunner struct {
	e *Engine
	b *box
}

// Run runs x under the same guard as every call (guarded): the disk
// watchdog, and the sandbox dying under it.
func (r boxRunner) Run(ctx context.Context, x capture.Exec) (capture.Ran, error) {
	ctx = context.WithValue(ctx, installCall{}, r.b) // in while the install holds the sandbox
	work := r.e.guarded(r.b, func(ctx context.Context, o *run.Output) (run.Result, error) {
		return r.e.execute(ctx, r.b, run.Process{Cmd: x.Cmd, Env: x.Env, User: x.User, Workdir: x.Workdir, Timeout: x.Timeout, Stream: x.Stream, Out: o})
	})
	out, err := work(ctx, run.NewOutput(r.e.cfg.Limits.LogOutputBytes, false, nil))
	out.Render()
	return capture.Ran{Result: out.Result, LogOut: out.LogOut, LogErr: out.LogErr}, err
}

// InstallPackages installs packages in a sandbox with the image's package
// manager (req.Manager, or the one auto picks) as root, and records the exact
// versions installed in the sandbox's manifest. An offline sandbox gets the
// bridge network for the install only; it is offline again when this
// returns, whether the install worked, failed, timed out or was cancelled.
// Meanwhile nothing else in it may use the network: new calls wait, and its
// other processes are stopped (see capture's freeze.go and holdForInstall).
// Output lines stream to progress. A failed or timed-out install is an error
// wrapping sandbox.ErrInvalid that quotes the end of the output.
func (e *Engine) InstallPackages(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.InstallRequest, progress sandbox.Progress) (sandbox.InstallResult, error) {
	if err := capture.CheckInstall(req); err != nil {
		return sandbox.InstallResult{}, err
	}
	timeout, err := e.timeoutFor(req.Timeout, true)
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
	res, input, ran, err := e.capture.Install(ctx, e.captureTarget(b), boxRunner{e, b}, req, timeout, progress)
	if input == "" { // refused before it ran: nothing to log
		return res, err
	}
	if err == nil {
		e.recordPackages(b, res.Installed)
	}
	act := sandbox.Activity{Tool: "install_packages", Client: owner.Client, Input: input,
		Duration: res.Duration.Milliseconds(), Stdout: ran.LogOut, Stderr: ran.LogErr, TimedOut: ran.Result.TimedOut}
	if err != nil {
		act.Error = err.Error()
	} else {
		act.ExitCode = &ran.Result.ExitCode
	}
	e.record(b.id, act)
	return res, err
}

// recordPackages merges installed packages into the sandbox's manifest and
// saves it at once, so a crash right after an install keeps the record.
func (e *Engine) recordPackages(b *box, pkgs []sandbox.Package) {
	e.changeState(b, "package manifest", func(st *boxState) {
		st.Packages = capture.MergePackages(st.Packages, pkgs)
	})
}

// Packages returns a sandbox's package manifest: what install_packages
// installed, with exact versions, sorted by manager and name.
func (e *Engine) Packages(ctx context.Context, ref string) ([]sandbox.Package, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.lookup(ref)
	if err != nil {
		return nil, err
	}
	return append([]sandbox.Package{}, b.state.Packages...), nil
}

// restoreOfflineNetworks takes every sandbox created without network off any
// network it is on: an engine that crashed during an install could not do it
// itself. While the user's config forbids the network (sandbox.allow_network
// = false), sandboxes created with the bridge network go offline too. The
// engine's adoption is the place to call it.
func (e *Engine) restoreOfflineNetworks(ctx context.Context) {
	e.mu.Lock()
	var offline []*box
	for _, b := range e.boxes {
		if e.keptOffline(b) {
			offline = append(offline, b)
		}
	}
	e.mu.Unlock()
	for _, b := range offline {
		e.capture.RestoreOffline(ctx, e.captureTarget(b))
	}
}

// keptOffline reports whether b must be on no network: it was created
// without one, or the user's config now forbids the network.
func (e *Engine) keptOffline(b *box) bool {
	return b.spec.Network == sandbox.NetworkNone || !e.cfg.Sandbox.AllowNetwork
}

// Commit saves a sandbox's filesystem as the image req.Image ("repo:tag";
// "latest" when no tag is given), under commit.namespace (see capture.Tag);
// the result names the real reference. It refuses a tag that exists unless
// req.Overwrite, moves only tags of Sandtray's own commits, and never writes
// to the sandbox's own base image or the configured images. The image is labelled with its source sandbox and the time,
// keeps its base image's command and user, and carries no label that would
// make its containers look managed by Sandtray. Docker pauses the sandbox
// while it copies the filesystem; progress hears before and after.
func (e *Engine) Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	tag, err := capture.Tag(req.Image, e.cfg.Commit.Namespace)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.CommitResult{}, err
	}
	defer e.release(b)
	res, err := e.capture.Commit(ctx, e.captureTarget(b), tag, req.Overwrite, progress)
	e.record(b.id, activityFor("commit_sandbox", owner, tag, err, res.ImageID))
	return res, err
}

// ExportDockerfile returns a Dockerfile that rebuilds the sandbox: FROM its
// base image, its env and workdir, RUN lines for the packages installed with
// pinned versions, the files added or changed (from a rootfs.tar build
// context) and RUN rm for files of the image it deleted. With hostPath, a
// folder under the allowed roots, it also writes Dockerfile, .dockerignore
// and rootfs.tar there (see SaveDockerfile for which folders are accepted).
func (e *Engine) ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) {
	dir := ""
	if hostPath != "" {
		var err error
		if dir, err = e.hostPath(hostPath, false); err != nil {
			return sandbox.Export{}, err
		}
	}
	return e.export(ctx, owner, ref, dir)
}

// SaveDockerfile writes a sandbox's export (see ExportDockerfile) to hostDir,
// a folder the user picked in the app, so it skips the allowed-roots check.
// The folder must be new (its parent exists), empty, or hold an earlier
// Sandtray export, whose Dockerfile, .dockerignore and rootfs.tar are then
// replaced; anything else is refused with sandbox.ErrConflict.
func (e *Engine) SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error) {
	if !filepath.IsAbs(hostDir) {
		return sandbox.Export{}, fmt.Errorf("folder %q must be an absolute path: %w", hostDir, sandbox.ErrInvalid)
	}
	dir, err := filepath.EvalSymlinks(hostDir)
	if errors.Is(err, os.ErrNotExist) {
		parent, perr := filepath.EvalSymlinks(filepath.Dir(hostDir))
		if perr != nil {
			return sandbox.Export{}, fmt.Errorf("folder %s does not exist: %w", filepath.Dir(hostDir), sandbox.ErrNotFound)
		}
		dir, err = filepath.Join(parent, filepath.Base(hostDir)), nil
	}
	if err != nil {
		return sandbox.Export{}, fmt.Errorf("folder %s: %w", hostDir, err)
	}
	return e.export(ctx, sandbox.Owner{Client: "Sandtray app"}, ref, dir)
}

// export runs an export and logs it once it got as far as a plan: a refused
// folder or a failed diff is only the caller's error.
func (e *Engine) export(ctx context.Context, owner sandbox.Owner, ref, dir string) (sandbox.Export, error) {
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		return sandbox.Export{}, err
	}
	defer done()
	ex, detail, err := e.capture.Export(ctx, e.captureTarget(b), dir)
	input := dir
	if dir == "" {
		input = "(returned as text)"
	}
	if err == nil || ex.Dir != "" {
		e.record(b.id, activityFor("export_dockerfile", owner, input, err, detail))
	}
	return ex, err
}

// Diff lists the paths added, changed and deleted in a sandbox against its
// image, limited to those under p when p is given.
func (e *Engine) Diff(ctx context.Context, owner sandbox.Owner, ref, p string) (sandbox.Diff, error) {
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.Diff{}, err
	}
	defer e.release(b)
	return e.capture.Diff(ctx, e.captureTarget(b), p)
}
