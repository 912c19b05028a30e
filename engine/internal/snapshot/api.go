package snapshot

import (
	"context"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// API is what this part gives the Engine's callers: the snapshot and fork
// tools. Package engine promotes these methods, and only these, onto
// *engine.Engine; the rest of the part's exported methods are the engine's
// centre's to call.
type API interface {
	Fork(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.ForkRequest) (forks []sandbox.Fork, err error)
	ListSnapshots(ctx context.Context, ref string) ([]sandbox.SnapshotInfo, error)
	Snapshot(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error)
	Restore(ctx context.Context, owner sandbox.Owner, ref, snap string) (sandbox.RestoreResult, error)
	DeleteSnapshot(ctx context.Context, owner sandbox.Owner, ref, snap string) error
}
