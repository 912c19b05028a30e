package snapshot

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"strconv"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Fork makes new sandboxes with a sandbox's files (as a snapshot takes
// them), settings, network rules and package manifest; port forwards stay
// with the original (a host port is one sandbox's). Each fork runs from
// its own tag of one image committed under ForkRepo, removed with the last
// fork. A fork that cannot be made removes those made before it.
//
// A fork is a new sandbox, held to what holds a new one:
//   - its spec is the original's made again by Host.NewSpec under the
//     config in force, as create_sandbox makes one (F60): a network,
//     profile or limit the user has since turned off is refused, or applied;
//   - its egress rules are in its state when it is put on the gate, so the
//     original's denies hold from its first connection (F61);
//   - its image counts against limits.max_committed_mb, and what the image
//     carries over its base image against the fork's own limits.disk_mb
//     (F59, see committed.go);
//   - it runs within the engine's lifetime: an exit cuts it short, and what
//     it made, sandboxes and tags, is removed (F70).
func (s *Service[B]) Fork(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.ForkRequest) (forks []sandbox.Fork, err error) {
	if err := s.caps.Missing(runtime.CapCommit); err != nil {
		return nil, err
	}
	if s.store.config().MaxForks == 0 {
		return nil, fmt.Errorf("forks are turned off by the user's config (limits.max_forks = 0): %w", sandbox.ErrForbidden)
	}
	count := cmp.Or(req.Count, 1)
	if max := s.store.config().MaxForks; count < 1 || count > max {
		return nil, fmt.Errorf("count %d is out of range: one fork_sandbox call makes 1 to %d sandboxes (limits.max_forks in Sandtray's config): %w", count, max, sandbox.ErrInvalid)
	}
	if s.host.Paused() {
		return nil, fmt.Errorf("new sandboxes are paused by the user in the Sandtray tray menu, forks too; ask them to resume: %w", sandbox.ErrPaused)
	}
	ctx, cancel := s.host.Bound(ctx) // an exit cuts the fork short
	defer cancel()
	b, err := s.host.Ready(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer s.host.Release(b)
	bx := s.host.Box(b)
	specs, err := s.forkSpecs(ctx, bx, req, count)
	if err != nil {
		return nil, err
	}
	for range count {
		done, err := s.host.Reserve(s.store.config().MaxSandboxes)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	hex := sandbox.RandomHex(6)
	base := s.store.ForkImage(hex)
	dir := s.store.Dir(bx.ID, "fork-"+hex)
	defer os.RemoveAll(dir)
	inherited, err := s.commitFork(ctx, b, base, dir)
	if err != nil {
		return nil, err
	}
	rec, err := ReadRecord(dir)
	if err != nil {
		s.store.RemoveImage(base)
		return nil, err
	}
	create := s.host.Forker(b, inherited)
	defer func() {
		if err != nil {
			for _, f := range forks {
				if derr := s.host.Delete(context.WithoutCancel(ctx), owner, f.SandboxID); derr != nil {
					s.store.log.Error("remove a fork of a fork_sandbox that failed", "sandbox", f.Name, "err", derr)
				}
			}
			forks = nil
		}
	}()
	for i, spec := range specs {
		tag := fmt.Sprintf("%s-%d", base, i+1)
		if err := s.store.Tag(ctx, base, tag); err != nil {
			s.store.RemoveImage(base)
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, bx.Name, err)
		}
		if i == len(specs)-1 {
			s.store.RemoveImage(base) // the forks' own tags keep the image
		}
		spec.Image = tag
		info, err := create(ctx, owner, spec)
		if err != nil {
			s.store.RemoveImage(tag)
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, bx.Name, err)
		}
		forks = append(forks, sandbox.Fork{SandboxID: info.ID, Name: spec.Name})
		if err := s.store.LoadTmpfs(ctx, info.ID, spec.User, dir, rec); err != nil {
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, bx.Name, err)
		}
		if err := s.store.SeedTmpfs(ctx, info.ID, tag, rec); err != nil {
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", spec.Name, bx.Name, err)
		}
		s.host.Record(bx.ID, sandbox.Activity{Tool: "fork_sandbox", Client: owner.Client, Input: spec.Name, Stdout: info.ID})
	}
	return forks, nil
}

// forkSpecs names count forks of b and makes each one's spec from b's as
// create_sandbox makes a new sandbox's (Host.NewSpec), under the config in
// force; the image is set once it is committed. The files stay in b's
// workdir, so a fork keeps it.
func (s *Service[B]) forkSpecs(ctx context.Context, b Box, req sandbox.ForkRequest, count int) ([]sandbox.Spec, error) {
	specs := make([]sandbox.Spec, count)
	for i := range specs {
		name := cutName(b.Name, 50) + "-fork-" + sandbox.RandomHex(2)
		switch {
		case req.Name != "" && count == 1:
			name = req.Name
		case req.Name != "":
			name = req.Name + "-" + strconv.Itoa(i+1)
		}
		spec, err := s.host.NewSpec(sandbox.CreateRequest{
			Name: name, Image: b.Spec.Image, Language: b.Spec.Language, Persistent: req.Persistent,
			Network: b.Spec.Network, MemoryMB: b.Spec.MemoryMB, CPUs: b.Spec.CPUs, GPUs: b.Spec.GPUs, Env: maps.Clone(b.Spec.Env),
		})
		if err != nil {
			return nil, fmt.Errorf("fork of sandbox %s: %w", b.Name, err)
		}
		spec.Workdir = b.Spec.Workdir
		if err := s.host.NameFree(name); err != nil {
			return nil, err
		}
		if i == 0 {
			if err := s.host.CheckGPUs(ctx, spec); err != nil {
				return nil, err
			}
		}
		specs[i] = spec
	}
	return specs, nil
}

// commitFork commits b as the image ref, its tmpfs tars in dir (charged to
// the snapshots' budget while the fork runs), and takes it back unless
// the committed images' budget and limits.disk_mb admit it. It returns
// what the image carries over its base image (Store.Inherited).
func (s *Service[B]) commitFork(ctx context.Context, b B, ref, dir string) (int64, error) {
	bx := s.host.Box(b)
	if err := s.store.Committed().Check(ctx); err != nil {
		return 0, fmt.Errorf("fork of sandbox %s refused: %w", bx.Name, err)
	}
	ctr, err := s.store.rt.Inspect(ctx, bx.ID)
	if err != nil {
		return 0, s.host.Gone(b, fmt.Errorf("fork of sandbox %s: %w", bx.Name, err))
	}
	hold, err := s.store.Reserve(ctx, bx, false)
	if err != nil {
		return 0, err
	}
	defer hold.Release(false) // the tars go once the forks have them
	if _, err := s.take(ctx, b, ref, dir, map[string]string{sandbox.LabelCommittedOn: ctr.ImageID}, hold); err != nil {
		return 0, err
	}
	inherited, err := s.store.Inherited(ctx, ref)
	if err == nil {
		err = s.store.Committed().Admit(ctx, ref)
	}
	if limit := s.store.config().DiskMB << 20; err == nil && limit > 0 && inherited > limit {
		err = fmt.Errorf("its fork would start holding %d MB of files over its base image (what the sandbox wrote, and what it was forked with), "+
			"more than limits.disk_mb (%d MB) lets a sandbox hold; delete files in the sandbox you do not need (diff_sandbox lists what it changed) and fork again: %w",
			inherited>>20, limit>>20, sandbox.ErrTooLarge)
	}
	if err != nil {
		s.store.RemoveImage(ref)
		return 0, fmt.Errorf("fork of sandbox %s refused: %w", bx.Name, err)
	}
	return inherited, nil
}

func cutName(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
