package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Restore puts b's files back as its snapshot snap (whose record is rec)
// has them, in place, and returns how many paths of its root it copied
// back. The caller has ended what ran in b and holds calls and new
// processes out of it; ctx is the one that lets Restore's own in.
//
// Every path that the snapshot's change list or the container's present one
// names (see plan) is removed from the sandbox, then copied back from a
// container made (not started) from the snapshot's image, when the
// snapshot has it; the copy is the runtime's, from outside, so nothing the
// sandbox's own binaries do can change what comes back. Then each tmpfs
// folder is emptied and filled from its tar. A strict sandbox's root is
// read-only: only its tmpfs folders change.
//
// Once it has begun to change files, an error says the sandbox is partly
// restored and that a new restore finishes it (it redoes every path that
// differs).
func (s *Store) Restore(ctx context.Context, b Box, snap string, rec Record) (int, error) {
	n := 0
	if b.Spec.Profile != config.ProfileStrict {
		cur, err := s.rt.Diff(ctx, b.ID)
		if err != nil {
			return 0, err
		}
		if n, err = s.restoreRoot(ctx, b, s.Ref(b.ID, snap), plan(rec.Changes, cur)); err != nil {
			return n, partly(b, snap, err)
		}
	}
	if err := s.LoadTmpfs(ctx, b.ID, b.Spec.User, s.Dir(b.ID, snap), rec); err != nil {
		return n, partly(b, snap, err)
	}
	return n, nil
}

// partly is a restore's error once it began to change files: the sandbox
// is between its state and the snapshot's, and a new restore finishes it
// (it redoes every path that differs).
func partly(b Box, snap string, err error) error {
	return fmt.Errorf("restore sandbox %s to snapshot %s stopped part way, so its files are partly restored; restore_sandbox again to finish: %w", b.Name, snap, err)
}

// rmBatch bounds the paths one removeall takes.
const rmBatch = 500

// restoreRoot puts the plan's paths back in b as a container made from
// image has them, and removes those it lacks. It returns how many paths it
// copied back.
func (s *Store) restoreRoot(ctx context.Context, b Box, image string, plan []string) (int, error) {
	if len(plan) == 0 {
		return 0, nil
	}
	helper, done, err := s.openImage(ctx, image)
	if err != nil {
		return 0, fmt.Errorf("open the snapshot's image: %w", err)
	}
	defer done()
	// A file the snapshot has replaces the sandbox's in place (the
	// runtime's copy does), and goes first: the sandbox's own rm, chmod and
	// libraries, which the removal runs with, are then the snapshot's.
	// Only a path the snapshot lacks, and a folder on either side (whose
	// other files must go, and which a copy never swaps with a file), is
	// removed, then the folders are copied back.
	var files, dirs, remove []string
	for _, p := range plan {
		st, err := s.rt.StatPath(ctx, helper, p)
		switch {
		case errors.Is(err, sandbox.ErrNotFound):
			remove = append(remove, p)
			continue
		case err != nil:
			return 0, err
		}
		now, err := s.rt.StatPath(ctx, b.ID, p)
		if err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			return 0, err
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
			rc, _, err := s.rt.CopyFrom(ctx, helper, p)
			if err != nil {
				return err
			}
			err = s.rt.CopyTo(ctx, b.ID, path.Dir(p), rc)
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
	if err := s.removePaths(ctx, b, remove); err != nil {
		return n, err
	}
	return n, copyBack(dirs)
}

// openImage makes a container of image, never started, to copy its files
// from (the runtime's copy, from outside); done removes it.
func (s *Store) openImage(ctx context.Context, image string) (id string, done func(), err error) {
	id, err = s.rt.Create(ctx, runtime.CreateOptions{Image: image, Cmd: []string{"true"}, Network: sandbox.NetworkNone,
		MemoryMB: 64, MilliCPUs: 100, PidsLimit: 16, Labels: maps.Clone(s.config().Labels)})
	if err != nil {
		return "", nil, err
	}
	return id, func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := s.rt.Remove(rctx, id); err != nil {
			s.log.Warn("remove a helper container", "id", sandbox.ShortID(id), "err", err)
		}
	}, nil
}

// removePaths removes paths from b with the agent's removeall (never the
// sandbox's own rm or chmod), in passes as its user, root and its user
// again: with no capabilities, each may remove only in folders it owns
// (root's install, the user's files).
func (s *Store) removePaths(ctx context.Context, b Box, paths []string) error {
	users := []string{b.Spec.User, "0", b.Spec.User}
	for i, u := range users {
		last := i == len(users)-1
		for batch := range slices.Chunk(paths, rmBatch) {
			_, err := s.rt.ExecAgent(ctx, b.ID, u, append([]string{"removeall"}, batch...), nil, 256)
			var exit *execgate.AgentExit
			switch {
			case errors.As(err, &exit) && !last:
			case errors.As(err, &exit):
				return fmt.Errorf("remove what changed since the snapshot: %s", cut(exit.Stderr, 500))
			case err != nil:
				return err
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
// engine's own files in the sandbox (its link, a read-only mount, among
// them), and what the runtime manages.
func skipRestore(p string) bool {
	for _, s := range []string{run.PidDir, runtime.AgentDir, runtime.LinkDir, "/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/proc", "/sys", "/dev"} {
		if p == s || strings.HasPrefix(p, s+"/") || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}

// plan is the paths a restore puts back as the snapshot has them: every
// path either change list names (the snapshot's, against the image, and
// the container's now), but a folder changed only as the parent of other
// changes (those are handled where they are), and none under another path
// of the plan (which it replaces whole). Sorted.
func plan(changes ...[]runtime.Change) []string {
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
