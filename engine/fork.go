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
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Fork makes new sandboxes with a sandbox's files (as a snapshot takes
// them), settings, network rules and package manifest; port forwards stay
// with the original (a host port is one sandbox's). Each fork runs from
// its own tag of one image committed under forkRepo, removed with the last
// fork. A fork that cannot be made removes those made before it.
func (e *Engine) Fork(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.ForkRequest) (forks []sandbox.Fork, err error) {
	if e.cfg().Limits.MaxForks == 0 {
		return nil, fmt.Errorf("forks are turned off by the user's config (limits.max_forks = 0): %w", sandbox.ErrForbidden)
	}
	count := cmp.Or(req.Count, 1)
	if max := e.cfg().Limits.MaxForks; count < 1 || count > max {
		return nil, fmt.Errorf("count %d is out of range: one fork_sandbox call makes 1 to %d sandboxes (limits.max_forks in Sandtray's config): %w", count, max, sandbox.ErrInvalid)
	}
	e.mu.Lock()
	paused := e.paused
	e.mu.Unlock()
	if paused {
		return nil, fmt.Errorf("new sandboxes are paused by the user in the Sandtray tray menu, forks too; ask them to resume: %w", sandbox.ErrPaused)
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer e.release(b)
	if err := probe.CheckGPUs(ctx, e.cfg().GPU, e.docker, b.spec); err != nil {
		return nil, err
	}
	names := make([]string, count)
	for i := range names {
		switch {
		case req.Name != "" && count == 1:
			names[i] = req.Name
		case req.Name != "":
			names[i] = req.Name + "-" + strconv.Itoa(i+1)
		default:
			names[i] = cutName(b.name, 50) + "-fork-" + sandbox.RandomHex(2)
		}
		if !validName.MatchString(names[i]) {
			return nil, fmt.Errorf("name %q is not valid: use letters, digits, '.', '_' or '-', up to 63 characters: %w", names[i], sandbox.ErrInvalid)
		}
		if err := e.nameFree(names[i]); err != nil {
			return nil, err
		}
	}
	for range count {
		done, err := e.reserve(e.cfg().Limits.MaxSandboxes)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	hex := sandbox.RandomHex(6)
	base := forkRepo + e.cfg().engine[:nameTagLen] + ":" + hex
	dir := e.cfg().snapshotDir(b.id, "fork-"+hex)
	defer os.RemoveAll(dir)
	hold, err := e.reserveSnapshot(ctx, b, false)
	if err != nil {
		return nil, err
	}
	defer hold.release(false) // the tars go once the forks have them
	if _, err := e.takeSnapshot(ctx, b, base, dir, map[string]string{}, hold); err != nil {
		return nil, err
	}
	rec, err := readRecord(dir)
	if err != nil {
		e.removeImage(base)
		return nil, err
	}
	e.mu.Lock()
	st := b.state
	e.mu.Unlock()
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
	for i, name := range names {
		tag := fmt.Sprintf("%s-%d", base, i+1)
		if err := e.docker.TagImage(ctx, base, tag); err != nil {
			e.removeImage(base)
			return forks, err
		}
		if i == len(names)-1 {
			e.removeImage(base) // the forks' own tags keep the image
		}
		spec := b.spec
		spec.Name, spec.Image, spec.Persistent, spec.Env = name, tag, req.Persistent, maps.Clone(b.spec.Env)
		info, err := e.createContainer(ctx, owner, spec)
		if err != nil {
			e.removeImage(tag)
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", name, b.name, err)
		}
		forks = append(forks, sandbox.Fork{SandboxID: info.ID, Name: name})
		if err := e.loadTmpfs(ctx, info.ID, spec.User, dir, rec); err != nil {
			return forks, fmt.Errorf("fork %s of sandbox %s: %w", name, b.name, err)
		}
		e.mu.Lock()
		nb := e.boxes[info.ID]
		e.mu.Unlock()
		if nb != nil {
			e.changeState(nb, "fork's rules", func(s *boxState) { s.Egress, s.Packages = st.Egress, slices.Clone(st.Packages) })
			e.record(b.id, sandbox.Activity{Tool: "fork_sandbox", Client: owner.Client, Input: name, Stdout: info.ID})
		}
	}
	return forks, nil
}

func cutName(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
