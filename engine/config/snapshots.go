package config

import (
	"fmt"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// SnapshotLimits are the [limits] keys that bound snapshots and forks
// (docs/snapshots.md).
type SnapshotLimits struct {
	MaxSnapshots int   `toml:"max_snapshots"`   // snapshots kept per sandbox
	MaxForks     int   `toml:"max_forks"`       // sandboxes one fork_sandbox call makes
	SnapshotMB   int64 `toml:"max_snapshot_mb"` // disk all of the engine's snapshots may take together
	// CommittedMB is the disk the images of the engine's commits
	// (commit_sandbox) and forks (fork_sandbox) may take together: each
	// one's own layers over the image it was committed from.
	CommittedMB int64 `toml:"max_committed_mb"`
}

// Defaults: 10 snapshots a sandbox, 4 forks a call, 10 GiB of snapshots
// and 10 GiB of committed and fork images in all.
const (
	defaultMaxSnapshots = 10
	defaultMaxForks     = 4
	defaultSnapshotMB   = 10 << 10
	defaultCommittedMB  = 10 << 10
	maxMaxSnapshots     = 100
)

func defaultSnapshotLimits() SnapshotLimits {
	return SnapshotLimits{MaxSnapshots: defaultMaxSnapshots, MaxForks: defaultMaxForks, SnapshotMB: defaultSnapshotMB, CommittedMB: defaultCommittedMB}
}

// check names the first bad key.
func (l SnapshotLimits) check() error {
	switch {
	case l.MaxSnapshots < 0 || l.MaxSnapshots > maxMaxSnapshots:
		return fmt.Errorf("limits.max_snapshots must be 0 (no snapshots) to %d: %w", maxMaxSnapshots, sandbox.ErrInvalid)
	case l.MaxForks < 0 || l.MaxForks > maxMaxSandboxes:
		return fmt.Errorf("limits.max_forks must be 0 (no forks) to %d: %w", maxMaxSandboxes, sandbox.ErrInvalid)
	case l.SnapshotMB < 1:
		return fmt.Errorf("limits.max_snapshot_mb must be above 0: %w", sandbox.ErrInvalid)
	case l.CommittedMB < 1:
		return fmt.Errorf("limits.max_committed_mb must be above 0: %w", sandbox.ErrInvalid)
	}
	return nil
}
