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

// TestConfigJobKeys: the [limits] job keys have their defaults and are
// validated with errors naming the key.
func TestConfigJobKeys(t *testing.T) {
	d := Default().Limits.JobLimits
	if d.MaxJobs != 16 || d.MaxJobsTotal != 64 || d.JobOutputMemoryBytes != 32<<20 || d.JobOutputDiskBytes != 256<<20 {
		t.Errorf("defaults %+v; want 16, 64, 32 MiB and 256 MiB", d)
	}
	tests := []struct {
		key    string // the key the error must name; "" when the change is valid
		change func(*Config)
	}{
		{"", func(c *Config) { c.Limits.MaxJobs, c.Limits.MaxJobsTotal = 1, 1 }},
		{"", func(c *Config) { c.Limits.JobOutputDiskBytes = 0 }},
		{"limits.max_jobs", func(c *Config) { c.Limits.MaxJobs = 0 }},
		{"limits.max_jobs", func(c *Config) { c.Limits.MaxJobs = 5000 }},
		{"limits.max_jobs_total", func(c *Config) { c.Limits.MaxJobs, c.Limits.MaxJobsTotal = 20, 10 }},
		{"limits.max_jobs_total", func(c *Config) { c.Limits.MaxJobsTotal = 5000 }},
		{"limits.job_output_memory_bytes", func(c *Config) { c.Limits.JobOutputMemoryBytes = 1000 }},
		{"limits.job_output_disk_bytes", func(c *Config) { c.Limits.JobOutputDiskBytes = -1 }},
	}
	for _, tt := range tests {
		cfg := Default()
		tt.change(&cfg)
		err := cfg.Validate()
		switch {
		case tt.key == "" && err != nil:
			t.Errorf("%+v: %v, want it accepted", cfg.Limits.JobLimits, err)
		case tt.key != "" && (!errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), tt.key)):
			t.Errorf("%+v: want an error naming %s, got %v", cfg.Limits.JobLimits, tt.key, err)
		}
	}
}
