package sandbox

import (
	"context"
	"time"
)

// SnapshotInfo is one saved state of a sandbox's files (snapshot_sandbox): its
// root filesystem's changes, as an image under the engine's own names, and
// the contents of its tmpfs folders (the strict profile's workdir).
type SnapshotInfo struct {
	ID        string    `json:"snapshot_id"`
	Label     string    `json:"label,omitempty"`
	Created   time.Time `json:"created"`
	SizeBytes int64     `json:"size_bytes"` // what it adds to disk: the files changed against the image, and the tmpfs folders
}

// SnapshotRequest is snapshot_sandbox's input. Live asks for the processes
// and their memory too (CRIU checkpoint), which this runtime may not offer.
type SnapshotRequest struct {
	Label string
	Live  bool
}

// RestoreResult is what restore_sandbox did.
type RestoreResult struct {
	SandboxID  string `json:"sandbox_id"`
	Name       string `json:"name"`
	SnapshotID string `json:"snapshot_id"`
	// KernelsRestarted is true when the sandbox's interpreters (kernels)
	// ended: their variables are gone, the next call starts fresh ones.
	KernelsRestarted bool  `json:"kernels_restarted"`
	JobsEnded        int   `json:"jobs_ended"` // background jobs stopped by the restore
	PathsRestored    int   `json:"paths_restored"`
	Milliseconds     int64 `json:"ms"`
	// PortsClosed are the sandbox ports whose forwards the restore ended:
	// their servers ended with the sandbox's jobs and kernels.
	PortsClosed []int `json:"ports_closed,omitempty"`
}

// ForkRequest is fork_sandbox's input: Count new sandboxes (1 when 0),
// named Name, or Name-1 … Name-N when there are several.
type ForkRequest struct {
	Count      int
	Name       string
	Persistent bool
}

// Fork is one sandbox a fork made.
type Fork struct {
	SandboxID string `json:"sandbox_id"`
	Name      string `json:"name"`
}

// Snapshots is what the snapshot tools and the app's Snapshots tab need of
// an engine: snapshot_sandbox, list_snapshots, delete_snapshot,
// restore_sandbox and fork_sandbox.
type Snapshots interface {
	Snapshot(ctx context.Context, owner Owner, ref string, req SnapshotRequest) (SnapshotInfo, error)
	ListSnapshots(ctx context.Context, ref string) ([]SnapshotInfo, error)
	DeleteSnapshot(ctx context.Context, owner Owner, ref, snapshotID string) error
	Restore(ctx context.Context, owner Owner, ref, snapshotID string) (RestoreResult, error)
	Fork(ctx context.Context, owner Owner, ref string, req ForkRequest) ([]Fork, error)
}
