package config

import (
	"fmt"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// CopyLimits are the [limits] keys that bound what a model may move between
// the host and a sandbox, and how many sandboxes one engine runs.
type CopyLimits struct {
	MaxCopyBytes int64 `toml:"max_copy_bytes"` // per copy or export, in either direction
	MaxCopyFiles int   `toml:"max_copy_files"` // entries per copy or export
	MaxSandboxes int   `toml:"max_sandboxes"`  // sandboxes one engine runs, persistent ones included
}

// maxMaxSandboxes bounds limits.max_sandboxes: each is a running container.
const maxMaxSandboxes = 1024

// Defaults: 1 GiB and 100,000 entries per copy; 32 sandboxes.
const (
	defaultMaxCopyBytes = 1 << 30
	defaultMaxCopyFiles = 100_000
	defaultMaxSandboxes = 32
)

func defaultCopyLimits() CopyLimits {
	return CopyLimits{MaxCopyBytes: defaultMaxCopyBytes, MaxCopyFiles: defaultMaxCopyFiles, MaxSandboxes: defaultMaxSandboxes}
}

// check names the first bad key.
func (l CopyLimits) check() error {
	switch {
	case l.MaxCopyBytes < 1:
		return fmt.Errorf("limits.max_copy_bytes must be above 0: %w", sandbox.ErrInvalid)
	case l.MaxCopyFiles < 1:
		return fmt.Errorf("limits.max_copy_files must be above 0: %w", sandbox.ErrInvalid)
	case l.MaxSandboxes < 1 || l.MaxSandboxes > maxMaxSandboxes:
		return fmt.Errorf("limits.max_sandboxes must be 1 to %d: %w", maxMaxSandboxes, sandbox.ErrInvalid)
	}
	return nil
}
