package engine

import (
	"context"
	"slices"

	"github.com/sandtray/sandtray/engine/internal/capture"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The capture tools (install_packages, commit_sandbox, export_dockerfile,
// diff_sandbox) are engine/internal/capture's (its Service, embedded in the
// Engine); the engine holds the sandbox for them (toolHost) and is the
// sandbox as an install sees it: its hold, gate, init and manifest.

// captureTarget is the sandbox as capture sees it.
func (t boxTarget) captureTarget() capture.Target {
	e, b := t.e, t.b
	var pkgs []sandbox.Package
	e.reg.Locked(func() { pkgs = slices.Clone(b.State.Packages) })
	return capture.Target{Handle: t, Image: b.Spec.Image,
		Language: b.Spec.Language, Network: b.Spec.Network, Env: b.Spec.Env, Packages: pkgs,
		Hold:       func(ctx context.Context) (func(), error) { return e.holdForWindow(ctx, b) },
		InitIsOurs: func(ctx context.Context) (bool, error) { i, err := e.initOf(ctx, b); return i.Ours, err },
		Gate:       e.networkPart.InstallGate(netBox{e, b}),
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

// Acquire marks the sandbox ref names busy, for a commit or a diff.
func (h toolHost) Acquire(ref string) (sandbox.Handle, func(), error) {
	b, err := h.e.reg.Acquire(ref)
	if err != nil {
		return nil, nil, err
	}
	return boxTarget{h.e, b}, func() { h.e.release(b) }, nil
}

// Install holds the sandbox ref names for an install: ready, and its
// install slot taken; everything the install starts in it passes the gates
// the install closes (enterCall, and engine/internal/execgate).
func (h toolHost) Install(ctx context.Context, ref string) (context.Context, capture.Target, capture.Runner, func(), error) {
	e := h.e
	b, err := e.ready(ctx, ref)
	if err != nil {
		return nil, capture.Target{}, nil, nil, err
	}
	unlock, err := e.reg.LockInstall(ctx, b)
	if err != nil {
		e.release(b)
		return nil, capture.Target{}, nil, nil, err
	}
	return installContext(ctx, b), boxTarget{e, b}.captureTarget(), boxRunner{e, b}, func() { unlock(); e.release(b) }, nil
}

// Target is a sandbox held by Acquire or Hold (a boxTarget) as capture sees it.
func (h toolHost) Target(t sandbox.Handle) capture.Target { return t.(boxTarget).captureTarget() }

// Packages is a sandbox's manifest.
func (h toolHost) Packages(ref string) (pkgs []sandbox.Package, err error) {
	err = h.e.reg.WithRef(ref, func(b *box) error {
		pkgs = append([]sandbox.Package{}, b.State.Packages...)
		return nil
	})
	return pkgs, err
}
