package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestConfigSecurityKeys(t *testing.T) {
	tests := []struct {
		key    string // the key the error must name; "" when the change is valid
		change func(*Config)
	}{
		{"", func(c *Config) {
			c.Sandbox.CapAdd = []string{"CHOWN", "CAP_DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "setgid"}
		}},
		{"sandbox.cap_add", func(c *Config) { c.Sandbox.CapAdd = []string{"NET_RAW"} }},
		{"sandbox.cap_add", func(c *Config) { c.Sandbox.CapAdd = []string{"SYS_PTRACE"} }},
		{"sandbox.cap_add", func(c *Config) { c.Sandbox.CapAdd = []string{"ALL"} }},
		{"limits.min_cpus", func(c *Config) { c.Limits.MinCPUs = 0 }},
		{"limits.min_cpus", func(c *Config) { c.Limits.MinCPUs = 0.001 }},
		{"limits.cpus", func(c *Config) { c.Limits.MinCPUs, c.Limits.CPUs = 0.5, 0.25 }},
		{"limits.pids", func(c *Config) { c.Limits.Pids = 1 << 20 }},
		{"", func(c *Config) { c.Sandbox.Profile = ProfileStrict }},
		{"sandbox.profile", func(c *Config) { c.Sandbox.Profile = "paranoid" }},
		{"sandbox.network", func(c *Config) { c.Sandbox.Profile, c.Sandbox.Network = ProfileStrict, sandbox.NetworkBridge }},
		{"sandbox.tmpfs_mb", func(c *Config) { c.Sandbox.TmpfsMB = 1 }},
		{"", func(c *Config) { c.Pull.Policy = PullNever }},
		{"pull.max_mb", func(c *Config) { c.Pull.MaxMB = 0 }},
		{"pull.policy", func(c *Config) { c.Pull.Policy = "always" }},
		{"pull.registries", func(c *Config) { c.Pull.Registries = nil }},
		{"pull.registries", func(c *Config) { c.Pull.Registries = []string{"docker.io/library"} }},
	}
	for _, tt := range tests {
		cfg := Default()
		tt.change(&cfg)
		err := cfg.Validate()
		switch {
		case tt.key == "" && err != nil:
			t.Errorf("%+v: %v, want it accepted", cfg.Sandbox, err)
		case tt.key != "" && (!errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), tt.key)):
			t.Errorf("want an error naming %s, got %v", tt.key, err)
		}
	}
}

func TestSecureSpecBounds(t *testing.T) {
	cfg := Default()
	cfg.Limits.MaxCPUs = 2
	for _, spec := range []sandbox.Spec{
		{CPUs: 1e-10, MemoryMB: 256, PidsLimit: 64},
		{CPUs: 3, MemoryMB: 256, PidsLimit: 64},
		{CPUs: 1, MemoryMB: 8, PidsLimit: 64},
		{CPUs: 1, MemoryMB: 256, PidsLimit: 0},
	} {
		if err := cfg.SecureSpec(&spec); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("SecureSpec(%+v) = %v, want ErrInvalid", spec, err)
		}
	}
	cfg.Sandbox.Profile = ProfileStrict
	spec := sandbox.Spec{CPUs: 1, MemoryMB: 256, PidsLimit: 64, Network: sandbox.NetworkBridge}
	if err := cfg.SecureSpec(&spec); !errors.Is(err, sandbox.ErrForbidden) || !strings.Contains(err.Error(), "strict") {
		t.Errorf("a bridge in the strict profile: %v, want ErrForbidden naming the profile", err)
	}
	spec.Network = sandbox.NetworkNone
	if err := cfg.SecureSpec(&spec); err != nil || spec.User != strictUser {
		t.Errorf("strict spec: %v, user %q; want %q", err, spec.User, strictUser)
	}
}
