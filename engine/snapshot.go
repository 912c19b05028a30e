package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

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
	hold, err := e.reserveSnapshot(ctx, b, true)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	snap := sandbox.RandomHex(6)
	s, err := e.takeSnapshot(ctx, b, e.cfg().snapshotRef(b.id, snap), e.cfg().snapshotDir(b.id, snap),
		map[string]string{labelSnapSandbox: b.id, labelSnapID: snap, labelSnapLabel: label}, hold)
	hold.release(err == nil)
	if err == nil {
		e.snapshotsChanged(b)
	}
	boxTarget{e, b}.log("snapshot_sandbox", owner)(label, err, snap)
	return s, err
}

// takeSnapshot saves b: its change list and tmpfs tars in the state dir's
// folder dir, and its container as image ref with labels (and the
// snapshot's size and time). What it writes to the host is charged to h as
// it is written; a snapshot's image layer too (a fork's is its own
// budget's, see Fork), removed when the budget refuses it.
func (e *Engine) takeSnapshot(ctx context.Context, b *box, ref, dir string, labels map[string]string, h *snapHold) (s sandbox.SnapshotInfo, err error) {
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
	rec, size, err := e.saveTmpfs(ctx, b, dir, h)
	if err != nil {
		return s, err
	}
	now := time.Now().UTC()
	_, isSnapshot := labels[labelSnapID] // else a fork's, which needs no change list
	var imageID string
	err = e.whilePaused(ctx, b, func() error {
		// The change list and the commit each walk the container's layer
		// (on some storage drivers, its whole tree): side by side.
		diffed := make(chan error, 1)
		go func() {
			var err error
			if isSnapshot {
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
		e.removeImage(ref) // also when the commit's answer was lost: the daemon may have made it
		return s, e.gone(b, fmt.Errorf("snapshot of sandbox %s: %w", b.name, err))
	}
	if isSnapshot {
		// What the snapshot adds to disk: its image's own layer, and the tars.
		layer := e.imageLayer(ctx, imageID, b.spec.Image)
		var over errSnapshotBudget
		if err := h.charge(layer); errors.As(err, &over) {
			e.removeImage(ref)
			return s, fmt.Errorf("snapshot of sandbox %s refused: its files outside its tmpfs folders add %d MB to its image, more than %s; "+
				"delete files in the sandbox (diff_sandbox lists what it changed), or snapshots you no longer need with delete_snapshot (list_snapshots shows each sandbox's), "+
				"and try again, or ask the user to raise limits.max_snapshot_mb: %w", b.name, layer>>20, over, sandbox.ErrTooLarge)
		}
		size += layer
	}
	rec.Size = size
	raw, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, "record.json"), raw, 0o600); err != nil {
		e.removeImage(ref)
		return s, fmt.Errorf("snapshot of %s: %w", b.name, err)
	}
	return sandbox.SnapshotInfo{ID: labels[labelSnapID], Label: labels[labelSnapLabel], Created: now, SizeBytes: size}, nil
}

// imageLayer is what image id adds over image base: its own layers (0
// when either cannot be sized).
func (e *Engine) imageLayer(ctx context.Context, id, base string) int64 {
	all, err := e.docker.ImageSize(ctx, id)
	if err != nil {
		return 0
	}
	under, err := e.docker.ImageSize(ctx, base)
	if err != nil || all < under {
		return 0
	}
	return all - under
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
