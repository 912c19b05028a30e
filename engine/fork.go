package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/sandtray/sandtray/engine/internal/probe"
	"github.com/sandtray/sandtray/engine/internal/snapshot"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Fork makes new sandboxes with a sandbox's files (as a snapshot takes
// them), settings, network rules and package manifest; port forwards stay
// with the original (a host port is one sandbox's). Each fork runs from
// its own tag of one image committed under snapshot.ForkRepo, removed with the last
// fork. A fork that cannot be made removes those made before it.
//
// A fork is a new sandbox, held to what holds a new one:
//   - its spec is the original's made again by newSpec under the config in
//     force, as create_sandbox makes one (F60): a network, profile or limit
//     the user has since turned off is refused, or applied;
//   - its egress rules are in its state when it is put on the gate, so the
//     original's denies hold from its first connection (F61);
//   - its image counts against limits.max_committed_mb, and what the image
//     carries over its base image against the fork's own limits.disk_mb
//     (F59, see engine/internal/snapshot/committed.go);
//   - it runs within the engine's lifetime: an exit cuts it short, and what
//     it made, sandboxes and tags, is removed (F70).
func (e *Engine) Fork(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.ForkRequest) (forks []sandbox.Fork, err error) {
	if err := e.caps.Missing(runtime.CapCommit); err != nil {
		return nil, err
	}
	if e.cfg().Limits.MaxForks == 0 {
		return nil, fmt.Errorf("forks are turned off by the user's config (limits.max_forks = 0): %w", sandbox.ErrForbidden)
	}
	count := cmp.Or(req.Count, 1)
	if max := e.cfg().Limits.MaxForks; count < 1 || count > max {
		return nil, fmt.Errorf("count %d is out of range: one fork_sandbox call makes 1 to %d sandboxes (limits.max_forks in Sandtray's config): %w", count, max, sandbox.ErrInvalid)
	}
	var paused bool
	e.locked(func() { paused = e.paused })
	if paused {
		return nil, fmt.Errorf("new sandboxes are paused by the user in the Sandtray tray menu, forks too; ask them to resume: %w", sandbox.ErrPaused)
	}
	ctx, cancel := e.bound(ctx) // an exit cuts the fork short
	defer cancel()
	b, err := e.ready(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer e.release(b)
	specs, err := e.forkSpecs(ctx, b, req, count)
	if err != nil {
		return nil, err
	}
	for range count {
		done, err := e.reserve(e.cfg().Limits.MaxSandboxes)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	hex := sandbox.RandomHex(6)
	base := e.snap.ForkImage(hex)
	dir := e.snap.Dir(b.id, "fork-"+hex)
	defer os.RemoveAll(dir)
	inherited, err := e.forkImage(ctx, b, base, dir)
	if err != nil {
		return nil, err
	}
	rec, err := snapshot.ReadRecord(dir)
	if err != nil {
		e.snap.RemoveImage(base)
		return nil, err
	}
	var st boxState
	e.locked(func() {
		st = boxState{Egress: b.state.Egress, Packages: slices.Clone(b.state.Packages), Inherited: inherited}
	})
	defer func() {
		if err != nil {
			for _, f := range forks {
				if derr := e.Delete(context.WithoutCancel(ctx), owner, f.SandboxID); derr != nil {
					e.log.Error("remove a fork of a fork_sandbox that failed", "sandbox", f.Name, "err", derr)
				}
			}
			forks = nil
		}
	}()
	for i, spec := range specs {
		tag := fmt.Sprintf("%s-%d", base, i+1)
		if err := e.snap.Tag(ctx, base, tag); err != nil {
			e.snap.RemoveImage(base)
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, b.name, err)
		}
		if i == len(specs)-1 {
			e.snap.RemoveImage(base) // the forks' own tags keep the image
		}
		spec.Image = tag
		st.Packages = slices.Clone(st.Packages) // each fork's manifest is its own
		info, err := e.createContainer(ctx, owner, spec, st)
		if err != nil {
			e.snap.RemoveImage(tag)
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, b.name, err)
		}
		forks = append(forks, sandbox.Fork{SandboxID: info.ID, Name: spec.Name})
		if err := e.snap.LoadTmpfs(ctx, info.ID, spec.User, dir, rec); err != nil {
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, b.name, err)
		}
		if err := e.snap.SeedTmpfs(ctx, info.ID, tag, rec); err != nil {
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, b.name, err)
		}
		e.record(b.id, sandbox.Activity{Tool: "fork_sandbox", Client: owner.Client, Input: spec.Name, Stdout: info.ID})
	}
	return forks, nil
}

// forkSpecs names count forks of b and makes each one's spec from b's as
// create_sandbox makes a new sandbox's (newSpec), under the config in
// force; the image is set once it is committed. The files stay in b's
// workdir, so a fork keeps it.
func (e *Engine) forkSpecs(ctx context.Context, b *box, req sandbox.ForkRequest, count int) ([]sandbox.Spec, error) {
	specs := make([]sandbox.Spec, count)
	for i := range specs {
		name := cutName(b.name, 50) + "-fork-" + sandbox.RandomHex(2)
		switch {
		case req.Name != "" && count == 1:
			name = req.Name
		case req.Name != "":
			name = req.Name + "-" + strconv.Itoa(i+1)
		}
		spec, err := e.newSpec(sandbox.CreateRequest{
			Name: name, Image: b.spec.Image, Language: b.spec.Language, Persistent: req.Persistent,
			Network: b.spec.Network, MemoryMB: b.spec.MemoryMB, CPUs: b.spec.CPUs, GPUs: b.spec.GPUs, Env: maps.Clone(b.spec.Env),
		})
		if err != nil {
			return nil, fmt.Errorf("fork of sandbox %s: %w", b.name, err)
		}
		spec.Workdir = b.spec.Workdir
		if err := e.nameFree(name); err != nil {
			return nil, err
		}
		if i == 0 {
			if err := probe.CheckGPUs(ctx, e.cfg().GPU, e.docker, spec); err != nil {
				return nil, err
			}
		}
		specs[i] = spec
	}
	return specs, nil
}

// forkImage commits b as the image ref, its tmpfs tars in dir (charged to
// the snapshots' budget while the fork runs), and takes it back unless
// the committed images' budget and limits.disk_mb admit it. It returns
// what the image carries over its base image (snapshot.Store.Inherited).
func (e *Engine) forkImage(ctx context.Context, b *box, ref, dir string) (int64, error) {
	if err := e.snap.Committed().Check(ctx); err != nil {
		return 0, fmt.Errorf("fork of sandbox %s refused: %w", b.name, err)
	}
	ctr, err := e.docker.Inspect(ctx, b.id)
	if err != nil {
		return 0, e.gone(b, fmt.Errorf("fork of sandbox %s: %w", b.name, err))
	}
	hold, err := e.snap.Reserve(ctx, b.snapBox(), false)
	if err != nil {
		return 0, err
	}
	defer hold.Release(false) // the tars go once the forks have them
	if _, err := e.takeSnapshot(ctx, b, ref, dir, map[string]string{sandbox.LabelCommittedOn: ctr.ImageID}, hold); err != nil {
		return 0, err
	}
	inherited, err := e.snap.Inherited(ctx, ref)
	if err == nil {
		err = e.snap.Committed().Admit(ctx, ref)
	}
	if limit := e.cfg().Limits.DiskMB << 20; err == nil && limit > 0 && inherited > limit {
		err = fmt.Errorf("its fork would start holding %d MB of files over its base image (what the sandbox wrote, and what it was forked with), "+
			"more than limits.disk_mb (%d MB) lets a sandbox hold; delete files in the sandbox you do not need (diff_sandbox lists what it changed) and fork again: %w",
			inherited>>20, limit>>20, sandbox.ErrTooLarge)
	}
	if err != nil {
		e.snap.RemoveImage(ref)
		return 0, fmt.Errorf("fork of sandbox %s refused: %w", b.name, err)
	}
	return inherited, nil
}

func cutName(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
