package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/probe"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Restore puts a sandbox's files back as a snapshot has them, in place: the
// sandbox keeps its container (so its id and name), settings, limits,
// network rules and port forwards. Its background jobs and kernels end
// first (the result says so); calls wait meanwhile.
//
// Every path that the snapshot's change list or the container's present one
// names (see restorePlan) is removed from the sandbox, then copied back from
// a container made (not started) from the snapshot's image, when the
// snapshot has it; the copy is Docker's, from outside, so nothing the
// sandbox's own binaries do can change what comes back. Then each tmpfs
// folder is emptied and filled from its tar.
func (e *Engine) Restore(ctx context.Context, owner sandbox.Owner, ref, snap string) (sandbox.RestoreResult, error) {
	start := time.Now()
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.RestoreResult{}, err
	}
	defer e.release(b)
	s, err := e.findSnapshot(ctx, b, snap)
	if err != nil {
		return sandbox.RestoreResult{}, err
	}
	dir := e.cfg().snapshotDir(b.id, s.ID)
	rec, err := readRecord(dir)
	if err != nil {
		return sandbox.RestoreResult{}, fmt.Errorf("snapshot %s of sandbox %s lacks its record in Sandtray's state dir (%v); it cannot be restored: delete it with delete_snapshot: %w",
			s.ID, b.name, err, sandbox.ErrConflict)
	}
	res := sandbox.RestoreResult{SandboxID: b.id, Name: b.name, SnapshotID: s.ID}
	res.JobsEnded = len(e.jobs.OutputsIn(b.id))
	e.jobs.StopIn(b.id)
	res.KernelsRestarted = slices.ContainsFunc(e.kernels.Started(), func(k string) bool { return strings.HasPrefix(k, b.id+"/") })
	e.kernels.Close(b.id)
	hctx, release, err := e.holdForSnapshot(ctx, b)
	if err != nil {
		return res, err
	}
	defer release()
	if err := e.restartIfEnded(hctx, b); err != nil {
		return res, err
	}
	if b.spec.Profile != config.ProfileStrict { // a strict sandbox's root is read-only: only its tmpfs folders change
		cur, err := e.docker.Diff(hctx, b.id)
		if err != nil {
			return res, e.gone(b, err)
		}
		plan := restorePlan(rec.Changes, cur)
		if res.PathsRestored, err = e.restoreRoot(hctx, b, e.cfg().snapshotRef(b.id, s.ID), plan); err != nil {
			return res, partly(b, s.ID, err)
		}
	}
	if err := e.loadTmpfs(hctx, b.id, b.spec.User, dir, rec); err != nil {
		return res, partly(b, s.ID, err)
	}
	res.Milliseconds = time.Since(start).Milliseconds()
	boxTarget{e, b}.log("restore_sandbox", owner)(s.ID, nil, fmt.Sprintf("%d paths; kernels restarted: %v; jobs ended: %d", res.PathsRestored, res.KernelsRestarted, res.JobsEnded))
	return res, nil
}

// partly is a restore's error once it began to change files: the sandbox
// is between its state and the snapshot's, and a new restore finishes it
// (it redoes every path that differs).
func partly(b *box, snap string, err error) error {
	return fmt.Errorf("restore sandbox %s to snapshot %s stopped part way, so its files are partly restored; restore_sandbox again to finish: %w", b.name, snap, err)
}

// restartIfEnded starts b's container again when ending its kernels ended
// it (a first kernel on the attachment is its PID 1).
func (e *Engine) restartIfEnded(ctx context.Context, b *box) error {
	c, err := e.docker.Inspect(ctx, b.id)
	if err != nil {
		return e.gone(b, err)
	}
	if c.State == "running" {
		return nil
	}
	e.setStatus(b, sandbox.StatusStopped)
	return e.ensureRunning(ctx, b)
}

func readRecord(dir string) (snapshotRecord, error) {
	var rec snapshotRecord
	raw, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(raw, &rec)
}

// rmBatch bounds the paths one rm takes.
const rmBatch = 500

// restoreRoot puts the plan's paths back in b as a container made from
// image has them, and removes those it lacks. It returns how many paths it
// copied back.
func (e *Engine) restoreRoot(ctx context.Context, b *box, image string, plan []string) (int, error) {
	if len(plan) == 0 {
		return 0, nil
	}
	helper, err := e.docker.Create(ctx, runtime.CreateOptions{Image: image, Cmd: []string{"true"}, Network: sandbox.NetworkNone,
		MemoryMB: 64, NanoCPUs: 1e8, PidsLimit: 16, Labels: maps.Clone(e.cfg().labels)})
	if err != nil {
		return 0, fmt.Errorf("open the snapshot's image: %w", err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := e.docker.Remove(rctx, helper); err != nil {
			e.log.Warn("remove a restore's helper container", "id", sandbox.ShortID(helper), "err", err)
		}
	}()
	// A file the snapshot has replaces the sandbox's in place (Docker's
	// copy does), and goes first: the sandbox's own rm, chmod and
	// libraries, which the removal runs with, are then the snapshot's.
	// Only a path the snapshot lacks, and a folder on either side (whose
	// other files must go, and which a copy never swaps with a file), is
	// removed, then the folders are copied back.
	var files, dirs, remove []string
	for _, p := range plan {
		st, err := e.docker.StatPath(ctx, helper, p)
		switch {
		case errors.Is(err, sandbox.ErrNotFound):
			remove = append(remove, p)
			continue
		case err != nil:
			return 0, err
		}
		now, err := e.docker.StatPath(ctx, b.id, p)
		if err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			return 0, e.gone(b, err)
		}
		if fs.FileMode(st.Mode).IsDir() || (err == nil && fs.FileMode(now.Mode).IsDir()) {
			remove, dirs = append(remove, p), append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	n := 0
	copyBack := func(paths []string) error {
		for _, p := range paths {
			rc, _, err := e.docker.CopyFrom(ctx, helper, p)
			if err != nil {
				return err
			}
			err = e.docker.CopyTo(ctx, b.id, path.Dir(p), rc)
			rc.Close()
			if err != nil {
				return fmt.Errorf("put back %s: %w", p, err)
			}
			n++
		}
		return nil
	}
	if err := copyBack(files); err != nil {
		return n, err
	}
	if err := e.removePaths(ctx, b, remove); err != nil {
		return n, err
	}
	return n, copyBack(dirs)
}

// removePaths removes paths from b with the agent's removeall (never the
// sandbox's own rm or chmod), in passes as its user, root and its user
// again: with no capabilities, each may remove only in folders it owns
// (root's install, the user's files).
func (e *Engine) removePaths(ctx context.Context, b *box, paths []string) error {
	users := []string{b.spec.User, "0", b.spec.User}
	for i, u := range users {
		last := i == len(users)-1
		for batch := range slices.Chunk(paths, rmBatch) {
			_, err := e.execs.ExecAgent(ctx, b.id, u, append([]string{"removeall"}, batch...), nil, 256)
			var exit *execgate.AgentExit
			switch {
			case errors.As(err, &exit) && !last:
			case errors.As(err, &exit):
				return fmt.Errorf("remove what changed since the snapshot: %s", cut(exit.Stderr, 500))
			case err != nil:
				return e.gone(b, err)
			}
		}
	}
	return nil
}

func cut(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

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
	if _, err := e.takeSnapshot(ctx, b, base, dir, map[string]string{}); err != nil {
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
