package engine

import (
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
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Restore puts a sandbox's files back as a snapshot has them, in place: the
// sandbox keeps its container (so its id and name), settings, limits and
// network rules. Its background jobs and kernels end first, and with them
// the servers behind its port forwards, which end too (the result says
// so, and the jobs say they were ended by the restore); calls wait
// meanwhile.
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
	res.JobsEnded = e.jobs.EndIn(b.id, "ended by restore_sandbox (snapshot "+s.ID+")")
	res.KernelsRestarted = slices.ContainsFunc(e.kernels.Started(), func(k string) bool { return strings.HasPrefix(k, b.id+"/") })
	e.kernels.Close(b.id)
	res.PortsClosed = e.endForwards(b)
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

// endForwards ends b's port forwards and returns their sandbox ports: a
// restore ended every process that could serve them (the sandbox's jobs
// and kernels; a call's processes end with the call), so a forward left
// would be listed, and accept connections, with nothing behind it.
func (e *Engine) endForwards(b *box) []int {
	var ports []int
	for _, fw := range e.ports.Forwards(b.id) {
		if e.ports.Remove(b.id, fw.Port) {
			ports = append(ports, fw.Port)
		}
	}
	if len(ports) > 0 {
		slices.Sort(ports)
		e.ports.Save(b.id)
		e.publish()
	}
	return ports
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
	helper, done, err := e.openImage(ctx, image)
	if err != nil {
		return 0, fmt.Errorf("open the snapshot's image: %w", err)
	}
	defer done()
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

// openImage makes a container of image, never started, to copy its files
// from (Docker's copy, from outside); done removes it.
func (e *Engine) openImage(ctx context.Context, image string) (id string, done func(), err error) {
	id, err = e.docker.Create(ctx, runtime.CreateOptions{Image: image, Cmd: []string{"true"}, Network: sandbox.NetworkNone,
		MemoryMB: 64, NanoCPUs: 1e8, PidsLimit: 16, Labels: maps.Clone(e.cfg().labels)})
	if err != nil {
		return "", nil, err
	}
	return id, func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := e.docker.Remove(rctx, id); err != nil {
			e.log.Warn("remove a helper container", "id", sandbox.ShortID(id), "err", err)
		}
	}, nil
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

// skipRestore reports whether p is a path restore leaves alone: the
// engine's own files in the sandbox, and what Docker manages.
func skipRestore(p string) bool {
	for _, s := range []string{run.PidDir, runtime.AgentDir, runtime.LinkDir, "/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/proc", "/sys", "/dev"} {
		if p == s || strings.HasPrefix(p, s+"/") || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}

// restorePlan is the paths restore puts back as the snapshot has them:
// every path either change list names (the snapshot's, against the image,
// and the container's now), but a folder changed only as the parent of
// other changes (those are handled where they are), and none under another
// path of the plan (which it replaces whole). Sorted.
func restorePlan(changes ...[]runtime.Change) []string {
	all := map[string]bool{}
	whole := map[string]bool{} // added or deleted in one of the lists: taken whole
	parent := map[string]bool{}
	for _, list := range changes {
		for _, c := range list {
			p := path.Clean(c.Path)
			all[p] = true
			whole[p] = whole[p] || c.Kind != runtime.ChangeChanged
			for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
				parent[d] = true
			}
		}
	}
	var cand []string
	for p := range all {
		if p == "/" || (parent[p] && !whole[p]) || skipRestore(p) {
			continue
		}
		cand = append(cand, p)
	}
	slices.Sort(cand)
	var out []string
	for _, p := range cand {
		if n := len(out); n > 0 && strings.HasPrefix(p, out[n-1]+"/") {
			continue
		}
		out = append(out, p)
	}
	return out
}
