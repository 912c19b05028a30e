package engine

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Snapshots (docs/snapshots.md). A snapshot is two things:
//
//   - an image committed from the sandbox's container (its root
//     filesystem's changes), named under snapshotRepo with this engine's
//     tag and a random id (never a name the caller gives: the caller's
//     label is only a label's value), labelled with the engine's identity
//     and the sandbox's container id under keys of its own (never
//     sandbox.LabelManaged or sandbox.LabelEngine, which would make the
//     containers of anyone who runs the image look like this engine's);
//   - a folder in the state dir (snapshotDir) with the list of the
//     container's changes at that moment (what restore must undo) and a tar
//     of each tmpfs folder (the strict profile's workdir, and each VOLUME
//     the image declares), which a commit does not see.
//
// The daemon's images are the record: list_snapshots asks Docker, so the
// snapshots of a persistent sandbox are there again after a restart, and
// those of a sandbox that is gone are removed (sweepSnapshots).

const (
	// snapshotRepo and forkRepo are the repositories of the engine's own
	// images; the tag part of the name carries the engine's tag.
	snapshotRepo = "sandtray-snapshot/"
	forkRepo     = "sandtray-fork/"

	labelSnapEngine  = "io.sandtray.snapshot.engine"  // the engine's identity
	labelSnapSandbox = "io.sandtray.snapshot.sandbox" // the container id of the sandbox it was taken of
	labelSnapID      = "io.sandtray.snapshot.id"
	labelSnapLabel   = "io.sandtray.snapshot.label"
	labelSnapCreated = "io.sandtray.snapshot.created"
)

// maxSnapshotLabel bounds a snapshot's label, in characters.
const maxSnapshotLabel = 200

var (
	validSnapshotID = regexp.MustCompile(`^[0-9a-f]{12}$`)
	validID         = regexp.MustCompile(`^[0-9a-f]{64}$`) // a container id, as a folder name
)

// errNoLive is the answer to live: true. Sandtray takes no live snapshots
// yet: CRIU checkpoint/restore is not wired in, and on the daemons it was
// tried on it cannot work (docs/snapshots.md says what was tried).
var errNoLive = fmt.Errorf("live snapshots (running processes and their memory) are not available: they need CRIU checkpoint/restore, "+
	"which Docker offers only in its experimental mode with criu installed on the daemon's host, and which Sandtray does not use yet; "+
	"take the snapshot without live: files only, and restore_sandbox then restarts the kernels: %w", sandbox.ErrInvalid)

// snapshotRef is the image name of a snapshot of container id.
func (c *settings) snapshotRef(id, snap string) string {
	return snapshotRepo + c.engine[:nameTagLen] + "-" + sandbox.ShortID(id) + ":" + snap
}

// snapshotDir is the state dir's folder for a snapshot's change list and
// tmpfs tars.
func (c *settings) snapshotDir(id, snap string) string {
	return filepath.Join(c.StateDir, "snapshots", id, snap)
}

// snapshotRecord is what the state dir keeps of a snapshot.
type snapshotRecord struct {
	Changes []runtime.Change `json:"changes"` // the container's changes against its image when it was taken
	Tmpfs   []string         `json:"tmpfs"`   // the tmpfs folders saved, tmpfs-<i>.tar in order
	Size    int64            `json:"size"`    // bytes on disk: the image's own layer and the tars
}

// checkLabel refuses a label with control characters or too long.
func checkLabel(label string) (string, error) {
	label = strings.TrimSpace(label)
	if len([]rune(label)) > maxSnapshotLabel || strings.IndexFunc(label, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("label %q is not valid: use up to %d characters, no control characters (it is only a note; the snapshot's name is Sandtray's own): %w",
			label, maxSnapshotLabel, sandbox.ErrInvalid)
	}
	return label, nil
}

// snapshotsOf lists container id's snapshots, oldest first.
func (e *Engine) snapshotsOf(ctx context.Context, id string) ([]sandbox.SnapshotInfo, error) {
	imgs, err := e.docker.ImagesLabeled(ctx, map[string]string{labelSnapEngine: e.cfg().engine, labelSnapSandbox: id})
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.SnapshotInfo, 0, len(imgs))
	for _, img := range imgs {
		s := sandbox.SnapshotInfo{ID: img.Labels[labelSnapID], Label: img.Labels[labelSnapLabel], Created: img.Created}
		if t, err := time.Parse(time.RFC3339Nano, img.Labels[labelSnapCreated]); err == nil {
			s.Created = t
		}
		if !validSnapshotID.MatchString(s.ID) {
			continue
		}
		// Only what this engine took: its state dir holds the record. An
		// image someone else labelled so is not listed (nor restored).
		rec, err := readRecord(e.cfg().snapshotDir(id, s.ID))
		if err != nil {
			continue
		}
		s.SizeBytes = rec.Size
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b sandbox.SnapshotInfo) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// snapshotBytes is the disk all of the engine's snapshots take, as each
// one's record says.
func (e *Engine) snapshotBytes(ctx context.Context) (int64, error) {
	imgs, err := e.docker.ImagesLabeled(ctx, map[string]string{labelSnapEngine: e.cfg().engine})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, img := range imgs {
		id, snap := img.Labels[labelSnapSandbox], img.Labels[labelSnapID]
		if !validID.MatchString(id) || !validSnapshotID.MatchString(snap) {
			continue // a fork's image
		}
		if rec, err := readRecord(e.cfg().snapshotDir(id, snap)); err == nil {
			n += rec.Size
		}
	}
	return n, nil
}

// ListSnapshots lists a sandbox's snapshots, oldest first.
func (e *Engine) ListSnapshots(ctx context.Context, ref string) ([]sandbox.SnapshotInfo, error) {
	b, err := e.acquire(ref)
	if err != nil {
		return nil, err
	}
	defer e.releaseSoon(b)
	return e.snapshotsOf(ctx, b.id)
}

// findSnapshot returns the snapshot of container id named snap.
func (e *Engine) findSnapshot(ctx context.Context, b *box, snap string) (sandbox.SnapshotInfo, error) {
	snap = strings.TrimSpace(snap)
	list, err := e.snapshotsOf(ctx, b.id)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	for _, s := range list {
		if s.ID == snap {
			return s, nil
		}
	}
	return sandbox.SnapshotInfo{}, fmt.Errorf("sandbox %s has no snapshot %q; list_snapshots shows its snapshots: %w", b.name, snap, sandbox.ErrNotFound)
}

// holdForSnapshot takes b's install slot and keeps every call and new
// process out of it (as an install does) until release; ctx lets the
// snapshot's own execs in.
func (e *Engine) holdForSnapshot(ctx context.Context, b *box) (context.Context, func(), error) {
	unlock, err := e.lockInstall(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	release, err := e.holdForWindow(ctx, b)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return installContext(ctx, b), func() { release(); unlock() }, nil
}

// Snapshot saves a sandbox's files (see the top of this file): its tmpfs
// folders first, then, with the container paused, its changes and a commit.
// Calls wait meanwhile; background jobs are frozen for the commit.
func (e *Engine) Snapshot(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error) {
	if req.Live {
		return sandbox.SnapshotInfo{}, errNoLive
	}
	label, err := checkLabel(req.Label)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	if e.cfg().Limits.MaxSnapshots == 0 {
		return sandbox.SnapshotInfo{}, fmt.Errorf("snapshots are turned off by the user's config (limits.max_snapshots = 0): %w", sandbox.ErrForbidden)
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	defer e.release(b)
	have, err := e.snapshotsOf(ctx, b.id)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	used, err := e.snapshotBytes(ctx)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	switch {
	case len(have) >= e.cfg().Limits.MaxSnapshots:
		return sandbox.SnapshotInfo{}, fmt.Errorf("sandbox %s already has %d snapshots, the most limits.max_snapshots allows; delete one with delete_snapshot (list_snapshots shows them) and try again: %w",
			b.name, len(have), sandbox.ErrConflict)
	case used >= e.cfg().Limits.SnapshotMB<<20:
		return sandbox.SnapshotInfo{}, fmt.Errorf("the snapshots of Sandtray's sandboxes take %d MB, the most limits.max_snapshot_mb allows; delete one with delete_snapshot (list_snapshots shows each sandbox's) and try again: %w",
			used>>20, sandbox.ErrConflict)
	}
	snap := sandbox.RandomHex(6)
	s, err := e.takeSnapshot(ctx, b, e.cfg().snapshotRef(b.id, snap), e.cfg().snapshotDir(b.id, snap),
		map[string]string{labelSnapSandbox: b.id, labelSnapID: snap, labelSnapLabel: label})
	boxTarget{e, b}.log("snapshot_sandbox", owner)(label, err, snap)
	return s, err
}

// takeSnapshot saves b: its change list and tmpfs tars in the state dir's
// folder dir, and its container as image ref with labels (and the
// snapshot's size and time).
func (e *Engine) takeSnapshot(ctx context.Context, b *box, ref, dir string, labels map[string]string) (s sandbox.SnapshotInfo, err error) {
	ctx, release, err := e.holdForSnapshot(ctx, b)
	if err != nil {
		return s, err
	}
	defer release()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s, fmt.Errorf("snapshot of %s: %w", b.name, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	rec, size, err := e.saveTmpfs(ctx, b, dir)
	if err != nil {
		return s, err
	}
	now := time.Now().UTC()
	var imageID string
	err = e.whilePaused(ctx, b, func() error {
		// The change list and the commit each walk the container's layer
		// (on some storage drivers, its whole tree): side by side.
		diffed := make(chan error, 1)
		go func() {
			var err error
			if _, snap := labels[labelSnapID]; snap { // a fork needs no change list
				rec.Changes, err = e.docker.Diff(ctx, b.id)
			}
			diffed <- err
		}()
		l := maps.Clone(labels)
		l[labelSnapEngine], l[labelSnapCreated] = e.cfg().engine, now.Format(time.RFC3339Nano)
		var err error
		imageID, err = e.docker.Commit(ctx, b.id, ref, runtime.ImageConfig{Labels: l, Cmd: []string{"sleep", "infinity"}, Workdir: b.spec.Workdir})
		return errors.Join(err, <-diffed)
	})
	if err != nil {
		if imageID != "" {
			e.removeImage(ref)
		}
		return s, e.gone(b, fmt.Errorf("snapshot of sandbox %s: %w", b.name, err))
	}
	// What the snapshot adds to disk: its image's own layer, and the tars.
	if all, err := e.docker.ImageSize(ctx, imageID); err == nil {
		if base, err := e.docker.ImageSize(ctx, b.spec.Image); err == nil && all > base {
			size += all - base
		}
	}
	rec.Size = size
	raw, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, "record.json"), raw, 0o600); err != nil {
		e.removeImage(ref)
		return s, fmt.Errorf("snapshot of %s: %w", b.name, err)
	}
	return sandbox.SnapshotInfo{ID: labels[labelSnapID], Label: labels[labelSnapLabel], Created: now, SizeBytes: size}, nil
}

// whilePaused runs fn with b's container paused (its processes frozen), then
// thaws it, whatever fn did. The caller holds new execs out of b (a
// frozen cgroup and a joining exec wedge the daemon, see docker.Commit).
func (e *Engine) whilePaused(ctx context.Context, b *box, fn func() error) error {
	if err := e.docker.Pause(ctx, b.id); err != nil {
		return err
	}
	err := fn()
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return errors.Join(err, e.docker.Unpause(uctx, b.id))
}

// snapshotMounts are b's tmpfs folders a snapshot keeps: all but /tmp,
// which is scratch (and holds the engine's own files, run.PidDir).
func (e *Engine) snapshotMounts(ctx context.Context, b *box) ([]string, error) {
	m, err := e.docker.TmpfsMounts(ctx, b.id)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(m, func(p string) bool { return p == "/tmp" || strings.HasPrefix(run.PidDir, p+"/") }), nil
}

// saveTmpfs writes a tar of each of b's tmpfs folders into dir.
func (e *Engine) saveTmpfs(ctx context.Context, b *box, dir string) (snapshotRecord, int64, error) {
	var rec snapshotRecord
	mounts, err := e.snapshotMounts(ctx, b)
	if err != nil {
		return rec, 0, err
	}
	var total int64
	for i, m := range mounts {
		n, err := e.saveFolder(ctx, b, m, filepath.Join(dir, "tmpfs-"+strconv.Itoa(i)+".tar"))
		if err != nil {
			return rec, 0, fmt.Errorf("snapshot of %s: save %s: %w", b.name, m, err)
		}
		total += n
		rec.Tmpfs = append(rec.Tmpfs, m)
	}
	return rec, total, nil
}

func (e *Engine) saveFolder(ctx context.Context, b *box, folder, file string) (int64, error) {
	rc, _, err := e.docker.CopyFrom(ctx, b.id, folder)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, rc)
	return n, errors.Join(err, f.Close())
}

// loadTmpfs puts the tmpfs folders of a snapshot (or a fork's) back into
// container id: each folder is emptied, then filled from its tar.
func (e *Engine) loadTmpfs(ctx context.Context, id, user string, dir string, rec snapshotRecord) error {
	for i, m := range rec.Tmpfs {
		if _, err := e.execs.ExecAgent(ctx, id, user, []string{"emptydir", m}, nil, 256); err != nil {
			return fmt.Errorf("empty %s: %w", m, err)
		}
		f, err := os.Open(filepath.Join(dir, "tmpfs-"+strconv.Itoa(i)+".tar"))
		if err != nil {
			return err
		}
		err = e.docker.CopyTo(ctx, id, m, stripTop(f))
		f.Close()
		if err != nil {
			return fmt.Errorf("restore %s: %w", m, err)
		}
	}
	return nil
}

// stripTop passes a tar archive of one folder (CopyFrom's: its top entry is
// the folder) on with that top entry left out and every name relative to
// it, to extract into the folder itself.
func stripTop(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		tr, tw := tar.NewReader(r), tar.NewWriter(pw)
		err := func() error {
			for {
				h, err := tr.Next()
				if errors.Is(err, io.EOF) {
					return tw.Close()
				}
				if err != nil {
					return err
				}
				_, rest, ok := strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
				if !ok || rest == "" {
					continue
				}
				h.Name = rest
				if err := tw.WriteHeader(h); err != nil {
					return err
				}
				if _, err := io.Copy(tw, tr); err != nil {
					return err
				}
			}
		}()
		pw.CloseWithError(err)
	}()
	return pr
}

// DeleteSnapshot removes one of a sandbox's snapshots.
func (e *Engine) DeleteSnapshot(ctx context.Context, owner sandbox.Owner, ref, snap string) error {
	b, err := e.acquire(ref)
	if err != nil {
		return err
	}
	defer e.release(b)
	s, err := e.findSnapshot(ctx, b, snap)
	if err != nil {
		return err
	}
	name := e.cfg().snapshotRef(b.id, s.ID)
	img, ierr := e.docker.InspectImage(ctx, name)
	err = e.docker.RemoveImage(ctx, name)
	if ierr == nil && err == nil {
		go e.removeUntaggedSoon(img.ID) // see dropImage
	}
	if err == nil {
		err = os.RemoveAll(e.cfg().snapshotDir(b.id, s.ID))
	}
	boxTarget{e, b}.log("delete_snapshot", owner)(s.ID, err, "")
	return err
}

// removeImage removes an image of the engine's own, logging a failure.
func (e *Engine) removeImage(ref string) {
	ctx, cancel := context.WithTimeout(e.base, 30*time.Second)
	defer cancel()
	err := e.docker.RemoveImage(ctx, ref)
	if err != nil {
		e.log.Warn("remove image", "image", ref, "err", err)
	}
}

// removeUntagged removes image id once nothing names or uses it.
func (e *Engine) removeUntagged(id string) {
	ctx, cancel := context.WithTimeout(e.base, 30*time.Second)
	defer cancel()
	_, err := e.docker.RemoveUntagged(ctx, id)
	if err != nil {
		e.log.Warn("remove image", "image", id, "err", err)
	}
}

// dropImage removes tag ref of an image of the engine's own and, when
// that was its last name, the image. Docker sometimes still counts a
// container just removed (a fork, a restore's helper) as using it, and the
// tag's removal then leaves it untagged: removeUntaggedSoon tries again
// for a few seconds, off the caller's path, and the next start-up's sweep
// removes what is left.
func (e *Engine) dropImage(ref string) {
	ctx, cancel := context.WithTimeout(e.base, 30*time.Second)
	img, err := e.docker.InspectImage(ctx, ref)
	cancel()
	e.removeImage(ref)
	if err == nil {
		go e.removeUntaggedSoon(img.ID)
	}
}

// removeUntaggedSoon tries removeUntagged for a few seconds, until the
// image is gone.
func (e *Engine) removeUntaggedSoon(id string) {
	for wait := 50 * time.Millisecond; wait < 5*time.Second; wait *= 2 {
		ctx, cancel := context.WithTimeout(e.base, 30*time.Second)
		_, err := e.docker.InspectImage(ctx, id)
		if err == nil {
			_, err = e.docker.RemoveUntagged(ctx, id)
		}
		cancel()
		if err != nil { // gone (not found), or Docker cannot be asked
			return
		}
		select {
		case <-e.base.Done():
			return
		case <-time.After(wait):
		}
	}
}

// dropSnapshots removes what a removed sandbox leaves of snapshots and
// forks: its snapshots' images and folder, and the image it was forked
// from (its own tag of it: the image goes with the last fork).
func (e *Engine) dropSnapshots(id, image string) {
	if strings.HasPrefix(image, forkRepo+e.cfg().engine[:nameTagLen]+":") {
		e.dropImage(image) // the image goes with the last fork's tag
	}
	ctx, cancel := context.WithTimeout(e.base, 30*time.Second)
	list, err := e.snapshotsOf(ctx, id)
	cancel()
	if err != nil {
		e.log.Warn("list the snapshots of a removed sandbox", "id", sandbox.ShortID(id), "err", err)
	}
	for _, s := range list {
		e.dropImage(e.cfg().snapshotRef(id, s.ID))
	}
	if e.cfg().StateDir != "" {
		os.RemoveAll(filepath.Join(e.cfg().StateDir, "snapshots", id))
	}
}

// sweepSnapshots removes, at start-up, the snapshots and fork images of
// this engine whose sandbox is gone (removed while the engine was not
// running, or by a crash between the container and its snapshots).
func (e *Engine) sweepSnapshots(ctx context.Context) {
	imgs, err := e.docker.ImagesLabeled(ctx, map[string]string{labelSnapEngine: e.cfg().engine})
	if err != nil {
		e.log.Warn("list snapshots", "err", err)
		return
	}
	e.mu.Lock()
	live := map[string]bool{}
	for id, b := range e.boxes {
		live[id] = true
		live[b.spec.Image] = true
	}
	e.mu.Unlock()
	for _, img := range imgs {
		if !slices.ContainsFunc(img.RepoTags, func(t string) bool { return strings.HasPrefix(t, "sandtray-") }) {
			e.removeUntagged(img.ID) // a fork image whose tags went, left by a crash
			continue
		}
		for _, tag := range img.RepoTags {
			id := img.Labels[labelSnapSandbox]
			switch {
			case strings.HasPrefix(tag, snapshotRepo+e.cfg().engine[:nameTagLen]+"-") && !live[id]:
				e.removeImage(tag)
				if validID.MatchString(id) {
					os.RemoveAll(filepath.Join(e.cfg().StateDir, "snapshots", id))
				}
			case strings.HasPrefix(tag, forkRepo+e.cfg().engine[:nameTagLen]+":") && !live[tag]:
				e.removeImage(tag)
			}
		}
	}
}

// skipRestore reports whether p is a path restore leaves alone: the
// engine's own files in the sandbox, and what Docker manages.
func skipRestore(p string) bool {
	for _, s := range []string{run.PidDir, runtime.AgentDir, "/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/proc", "/sys", "/dev"} {
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
