// Package snapshot takes, lists, restores and removes a sandbox's
// snapshots, and makes the images and tmpfs tars its forks start from
// (docs/snapshots.md). A snapshot is two things:
//
//   - an image committed from the sandbox's container (its root
//     filesystem's changes), named under Repo with the engine's tag and a
//     random id (never a name the caller gives: the caller's label is only
//     a label's value), labelled with the engine's identity and the
//     sandbox's container id under keys of its own (never
//     sandbox.LabelManaged or sandbox.LabelEngine, which would make the
//     containers of anyone who runs the image look like this engine's);
//   - a folder in the state dir (Dir) with the list of the container's
//     changes at that moment (what a restore must undo) and a tar of each
//     tmpfs folder (the strict profile's workdir, and each VOLUME the image
//     declares), which a commit does not see.
//
// The runtime's images are the record: List asks the runtime, so the
// snapshots of a persistent sandbox are there again after a restart, and
// those of a sandbox that is gone are removed (Sweep).
//
// The tools (list_snapshots, snapshot_sandbox, restore_sandbox,
// delete_snapshot, fork_sandbox) are a Service, which the engine embeds:
// it knows no registry and no call of the engine's, but reaches them
// through the Host the engine fills in, which resolves the sandbox, holds
// its calls and processes out (as an install does) while a snapshot is
// taken or restored, ends what a restore ends and makes a fork's
// sandboxes. The Store's mechanics see a sandbox as a Box. Both reach the
// runtime through the engine's engine/internal/execgate Runtime, so every
// process they start in a sandbox (the agent's removeall and emptydir)
// passes the gate; the rest are the runtime's own calls (inspect, commit,
// diff, archive copies, images).
package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

const (
	// Repo and ForkRepo are the repositories of the engine's own images;
	// the tag part of the name carries the engine's tag.
	Repo     = "sandtray-snapshot/"
	ForkRepo = "sandtray-fork/"

	LabelEngine  = "io.sandtray.snapshot.engine"  // the engine's identity
	LabelSandbox = "io.sandtray.snapshot.sandbox" // the container id of the sandbox it was taken of
	LabelID      = "io.sandtray.snapshot.id"
	LabelLabel   = "io.sandtray.snapshot.label"
	LabelCreated = "io.sandtray.snapshot.created"
)

// MaxLabel bounds a snapshot's label, in characters.
const MaxLabel = 200

var (
	validSnapshotID = regexp.MustCompile(`^[0-9a-f]{12}$`)
	validID         = regexp.MustCompile(`^[0-9a-f]{64}$`) // a container id, as a folder name
)

// ErrNoLive is the answer to live: true. Sandtray takes no live snapshots
// yet: CRIU checkpoint/restore is not wired in, and on the daemons it was
// tried on it cannot work (docs/snapshots.md says what was tried).
var ErrNoLive = fmt.Errorf("live snapshots (running processes and their memory) are not available: they need CRIU checkpoint/restore, "+
	"which Docker offers only in its experimental mode with criu installed on the daemon's host, and which Sandtray does not use yet; "+
	"take the snapshot without live: files only, and restore_sandbox then restarts the kernels: %w", sandbox.ErrInvalid)

// Runtime is what snapshots need of the container runtime: the engine's
// execgate.Runtime, whose ExecAgent is the gate's own exec of the agent.
type Runtime interface {
	Inspect(ctx context.Context, id string) (runtime.Container, error)
	Create(ctx context.Context, o runtime.CreateOptions) (string, error)
	Remove(ctx context.Context, id string) error
	TmpfsMounts(ctx context.Context, id string) ([]string, error)
	StatPath(ctx context.Context, id, path string) (runtime.PathStat, error)
	CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, runtime.PathStat, error)
	InspectImage(ctx context.Context, ref string) (runtime.Image, error)
	ImageSize(ctx context.Context, ref string) (int64, error)
	ImagesLabeled(ctx context.Context, labels map[string]string) ([]runtime.LabeledImage, error)
	TagImage(ctx context.Context, src, ref string) error
	RemoveImage(ctx context.Context, ref string) error
	RemoveUntagged(ctx context.Context, id string) (bool, error)
	Pause(ctx context.Context, id string) error
	Unpause(ctx context.Context, id string) error
	Diff(ctx context.Context, id string) ([]runtime.Change, error)
	Commit(ctx context.Context, id, tag string, cfg runtime.ImageConfig) (string, error)
	// ExecAgent runs the agent's subcommand args in container id as user,
	// through the exec gate, and returns at most max bytes of its stdout.
	ExecAgent(ctx context.Context, id, user string, args []string, stdin io.Reader, max int) ([]byte, error)
}

// Config is what the snapshots need of the configuration in force.
type Config struct {
	Engine       string            // the engine's identity (LabelEngine's value)
	Tag          string            // the engine's short tag, in its images' names
	StateDir     string            // where each snapshot's folder is (Dir)
	Labels       map[string]string // added to every container made (the helpers that images are read through)
	MaxSnapshots int               // limits.max_snapshots: per sandbox
	BudgetMB     int64             // limits.max_snapshot_mb: all of the engine's snapshots together
	CommittedMB  int64             // limits.max_committed_mb: the engine's commits and fork images together (committed.go)
	MaxForks     int               // limits.max_forks: sandboxes one fork makes
	MaxSandboxes int               // limits.max_sandboxes: a fork's sandboxes count
	DiskMB       int64             // limits.disk_mb: what a fork's image carries over its base image counts
}

// Box is the sandbox a snapshot is of, as the engine knows it.
type Box struct {
	ID, Name string
	Spec     sandbox.Spec
}

// Store is the engine's snapshots: it takes, lists, restores and removes
// them, and keeps those under way within their limits.
type Store struct {
	rt     Runtime
	config func() Config
	base   context.Context // the engine's lifetime: removals off a caller's path end with it
	log    *slog.Logger
	ledger ledger
}

// New makes the snapshots of an engine whose lifetime is base. config is
// read at every use (the engine's configuration may change while it runs).
func New(base context.Context, rt Runtime, config func() Config, log *slog.Logger) *Store {
	return &Store{rt: rt, config: config, base: base, log: log}
}

// Ref is the image name of snapshot snap of container id.
func (s *Store) Ref(id, snap string) string {
	return Repo + s.config().Tag + "-" + sandbox.ShortID(id) + ":" + snap
}

// Dir is the state dir's folder for a snapshot's change list and tmpfs
// tars (a fork's too, named "fork-…").
func (s *Store) Dir(id, snap string) string {
	return filepath.Join(s.config().StateDir, "snapshots", id, snap)
}

// Record is what the state dir keeps of a snapshot.
type Record struct {
	Changes []runtime.Change `json:"changes"` // the container's changes against its image when it was taken
	Tmpfs   []string         `json:"tmpfs"`   // the tmpfs folders saved, tmpfs-<i>.tar in order
	Size    int64            `json:"size"`    // bytes on disk: the image's own layer and the tars
}

// ReadRecord reads the record of the snapshot (or fork) in folder dir.
func ReadRecord(dir string) (Record, error) {
	var rec Record
	raw, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(raw, &rec)
}

// CheckLabel refuses a label with control characters or too long.
func CheckLabel(label string) (string, error) {
	label = strings.TrimSpace(label)
	if len([]rune(label)) > MaxLabel || strings.IndexFunc(label, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("label %q is not valid: use up to %d characters, no control characters (it is only a note; the snapshot's name is Sandtray's own): %w",
			label, MaxLabel, sandbox.ErrInvalid)
	}
	return label, nil
}

// List lists container id's snapshots, oldest first.
func (s *Store) List(ctx context.Context, id string) ([]sandbox.SnapshotInfo, error) {
	imgs, err := s.rt.ImagesLabeled(ctx, map[string]string{LabelEngine: s.config().Engine, LabelSandbox: id})
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.SnapshotInfo, 0, len(imgs))
	for _, img := range imgs {
		info := sandbox.SnapshotInfo{ID: img.Labels[LabelID], Label: img.Labels[LabelLabel], Created: img.Created}
		if t, err := time.Parse(time.RFC3339Nano, img.Labels[LabelCreated]); err == nil {
			info.Created = t
		}
		if !validSnapshotID.MatchString(info.ID) {
			continue
		}
		// Only what this engine took: its state dir holds the record. An
		// image someone else labelled so is not listed (nor restored).
		rec, err := ReadRecord(s.Dir(id, info.ID))
		if err != nil {
			continue
		}
		info.SizeBytes = rec.Size
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b sandbox.SnapshotInfo) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// bytes is the disk all of the engine's snapshots take, as each one's
// record says.
func (s *Store) bytes(ctx context.Context) (int64, error) {
	imgs, err := s.rt.ImagesLabeled(ctx, map[string]string{LabelEngine: s.config().Engine})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, img := range imgs {
		id, snap := img.Labels[LabelSandbox], img.Labels[LabelID]
		if !validID.MatchString(id) || !validSnapshotID.MatchString(snap) {
			continue // a fork's image
		}
		if rec, err := ReadRecord(s.Dir(id, snap)); err == nil {
			n += rec.Size
		}
	}
	return n, nil
}

// Find returns b's snapshot named snap.
func (s *Store) Find(ctx context.Context, b Box, snap string) (sandbox.SnapshotInfo, error) {
	snap = strings.TrimSpace(snap)
	list, err := s.List(ctx, b.ID)
	if err != nil {
		return sandbox.SnapshotInfo{}, err
	}
	for _, info := range list {
		if info.ID == snap {
			return info, nil
		}
	}
	return sandbox.SnapshotInfo{}, fmt.Errorf("sandbox %s has no snapshot %q; list_snapshots shows its snapshots: %w", b.Name, snap, sandbox.ErrNotFound)
}

// Take saves b: its change list and tmpfs tars in the state dir's folder
// dir, and its container as image ref with labels (and the snapshot's size
// and time). A snapshot's labels carry LabelID; a fork's do not, and it
// gets no change list. What it writes to the host is charged to h as it is
// written; a snapshot's image layer too (a fork's is its own budget's),
// removed when the budget refuses it. The caller holds every call and new
// process out of b; ctx is the one that lets Take's own in.
func (s *Store) Take(ctx context.Context, b Box, ref, dir string, labels map[string]string, h *Hold) (info sandbox.SnapshotInfo, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return info, fmt.Errorf("snapshot of %s: %w", b.Name, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	rec, size, err := s.saveTmpfs(ctx, b, dir, h)
	if err != nil {
		return info, err
	}
	now := time.Now().UTC()
	_, isSnapshot := labels[LabelID]
	var imageID string
	err = s.whilePaused(ctx, b.ID, func() error {
		// The change list and the commit each walk the container's layer
		// (on some storage drivers, its whole tree): side by side.
		diffed := make(chan error, 1)
		go func() {
			var err error
			if isSnapshot {
				rec.Changes, err = s.rt.Diff(ctx, b.ID)
			}
			diffed <- err
		}()
		l := maps.Clone(labels)
		l[LabelEngine], l[LabelCreated] = s.config().Engine, now.Format(time.RFC3339Nano)
		var err error
		imageID, err = s.rt.Commit(ctx, b.ID, ref, runtime.ImageConfig{Labels: l, Cmd: []string{"sleep", "infinity"}, Workdir: b.Spec.Workdir})
		return errors.Join(err, <-diffed)
	})
	if err != nil {
		s.RemoveImage(ref) // also when the commit's answer was lost: the runtime may have made it
		return info, fmt.Errorf("snapshot of sandbox %s: %w", b.Name, err)
	}
	if isSnapshot {
		// What the snapshot adds to disk: its image's own layer, and the tars.
		layer := s.imageLayer(ctx, imageID, b.Spec.Image)
		var over errBudget
		if err := h.charge(layer); errors.As(err, &over) {
			s.RemoveImage(ref)
			return info, fmt.Errorf("snapshot of sandbox %s refused: its files outside its tmpfs folders add %d MB to its image, more than %s; "+
				"delete files in the sandbox (diff_sandbox lists what it changed), or snapshots you no longer need with delete_snapshot (list_snapshots shows each sandbox's), "+
				"and try again, or ask the user to raise limits.max_snapshot_mb: %w", b.Name, layer>>20, over, sandbox.ErrTooLarge)
		}
		size += layer
	}
	rec.Size = size
	raw, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, "record.json"), raw, 0o600); err != nil {
		s.RemoveImage(ref)
		return info, fmt.Errorf("snapshot of %s: %w", b.Name, err)
	}
	return sandbox.SnapshotInfo{ID: labels[LabelID], Label: labels[LabelLabel], Created: now, SizeBytes: size}, nil
}

// imageLayer is what image id adds over image base: its own layers (0
// when either cannot be sized).
func (s *Store) imageLayer(ctx context.Context, id, base string) int64 {
	all, err := s.rt.ImageSize(ctx, id)
	if err != nil {
		return 0
	}
	under, err := s.rt.ImageSize(ctx, base)
	if err != nil || all < under {
		return 0
	}
	return all - under
}

// whilePaused runs fn with container id paused (its processes frozen),
// then thaws it, whatever fn did. The caller holds new execs out of it (a
// frozen cgroup and a joining exec wedge the daemon, see docker.Commit).
func (s *Store) whilePaused(ctx context.Context, id string, fn func() error) error {
	if err := s.rt.Pause(ctx, id); err != nil {
		return err
	}
	err := fn()
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return errors.Join(err, s.rt.Unpause(uctx, id))
}
