package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestConfigCopyAndCommitKeys: the [limits] copy keys and [commit] are
// validated with errors naming the key.
func TestConfigCopyAndCommitKeys(t *testing.T) {
	tests := []struct {
		key    string // the key the error must name; "" when the change is valid
		change func(*Config)
	}{
		{"", func(c *Config) { c.Limits.MaxCopyBytes, c.Limits.MaxCopyFiles = 1<<20, 10 }},
		{"limits.max_copy_bytes", func(c *Config) { c.Limits.MaxCopyBytes = 0 }},
		{"limits.max_copy_files", func(c *Config) { c.Limits.MaxCopyFiles = -1 }},
		{"limits.max_sandboxes", func(c *Config) { c.Limits.MaxSandboxes = 0 }},
		{"limits.max_sandboxes", func(c *Config) { c.Limits.MaxSandboxes = 5000 }},
		{"", func(c *Config) { c.Commit.Namespace = "me/images/" }},
		{"commit.namespace", func(c *Config) { c.Commit.Namespace = "" }},
		{"commit.namespace", func(c *Config) { c.Commit.Namespace = "sandtray-local" }},
		{"commit.namespace", func(c *Config) { c.Commit.Namespace = "library/" }},
		{"commit.namespace", func(c *Config) { c.Commit.Namespace = "localhost:5000/x/" }},
		{"commit.namespace", func(c *Config) { c.Commit.Namespace = "Upper/" }},
	}
	for _, tt := range tests {
		cfg := Default()
		tt.change(&cfg)
		err := cfg.Validate()
		switch {
		case tt.key == "" && err != nil:
			t.Errorf("%+v %+v: %v, want it accepted", cfg.Limits.CopyLimits, cfg.Commit, err)
		case tt.key != "" && (!errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), tt.key)):
			t.Errorf("%+v %+v: want an error naming %s, got %v", cfg.Limits.CopyLimits, cfg.Commit, tt.key, err)
		}
	}
	if got := Default().Commit.Namespace; got != "sandtray-local/" {
		t.Errorf("default commit.namespace = %q", got)
	}
}
