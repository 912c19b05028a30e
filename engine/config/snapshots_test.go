package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestConfigSnapshotKeys: limits.max_snapshots, max_forks,
// max_snapshot_mb and max_committed_mb are read from the file and validated with errors naming
// the key.
func TestConfigSnapshotKeys(t *testing.T) {
	for _, tt := range []struct {
		key    string
		change func(*Config)
	}{
		{"", func(c *Config) { c.Limits.MaxSnapshots, c.Limits.MaxForks = 0, 0 }},
		{"limits.max_snapshots", func(c *Config) { c.Limits.MaxSnapshots = -1 }},
		{"limits.max_snapshots", func(c *Config) { c.Limits.MaxSnapshots = 1000 }},
		{"limits.max_forks", func(c *Config) { c.Limits.MaxForks = 5000 }},
		{"limits.max_snapshot_mb", func(c *Config) { c.Limits.SnapshotMB = 0 }},
		{"limits.max_committed_mb", func(c *Config) { c.Limits.CommittedMB = 0 }},
	} {
		cfg := Default()
		tt.change(&cfg)
		err := cfg.Validate()
		switch {
		case tt.key == "" && err != nil:
			t.Errorf("%+v: %v, want it accepted", cfg.Limits.SnapshotLimits, err)
		case tt.key != "" && (!errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), tt.key)):
			t.Errorf("%+v: want an error naming %s, got %v", cfg.Limits.SnapshotLimits, tt.key, err)
		}
	}
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("[limits]\nmax_snapshots = 3\nmax_forks = 2\nmax_snapshot_mb = 100\nmax_committed_mb = 200\n"), 0o600)
	cfg, err := Load(p)
	if err != nil || cfg.Limits.SnapshotLimits != (SnapshotLimits{MaxSnapshots: 3, MaxForks: 2, SnapshotMB: 100, CommittedMB: 200}) {
		t.Errorf("loaded %+v, %v", cfg.Limits.SnapshotLimits, err)
	}
	if d := Default().Limits.SnapshotLimits; d.MaxSnapshots != 10 || d.MaxForks != 4 || d.CommittedMB != 10<<10 {
		t.Errorf("defaults %+v", d)
	}
}
