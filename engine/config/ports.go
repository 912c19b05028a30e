package config

import (
	"fmt"
	"strconv"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Ports bounds expose_port: which sandbox ports may be forwarded to
// the host's loopback, and how many forwards and connections there may be.
type Ports struct {
	Forbidden      []int `toml:"forbidden"`       // sandbox ports expose_port refuses
	MaxPerSandbox  int   `toml:"max_per_sandbox"` // forwards one sandbox may have; 0 turns expose_port off
	MaxConnections int   `toml:"max_connections"` // connections one forward relays at once
}

// GPU says whether and how many GPUs create_sandbox may give a sandbox.
type GPU struct {
	Allow   bool   `toml:"allow"`   // false refuses every gpus request
	Default string `toml:"default"` // gpus of a sandbox that asks for none: "", "all" or a count
	Max     int    `toml:"max"`     // most GPUs one sandbox may get; 0: no maximum ("all" allowed)
}

// defaultPortsConfig and defaultGPUConfig are the settings with no config file.
func defaultPortsConfig() Ports { return Ports{MaxPerSandbox: 8, MaxConnections: 64} }
func defaultGPUConfig() GPU     { return GPU{Allow: true} }

// maxForwardConnections bounds ports.max_connections: each connection is a
// process in the sandbox.
const maxForwardConnections = 1024

// validatePortsAndGPU checks the [ports] and [gpu] sections, naming the bad key.
func (c *Config) validatePortsAndGPU() error {
	p, g := c.Ports, c.GPU
	for i, port := range p.Forbidden {
		if port < 1 || port > 65535 {
			return fmt.Errorf("ports.forbidden[%d] %d must be a port from 1 to 65535: %w", i, port, sandbox.ErrInvalid)
		}
	}
	switch {
	case p.MaxPerSandbox < 0 || p.MaxPerSandbox > 256:
		return fmt.Errorf("ports.max_per_sandbox must be 0 (no forwards) to 256: %w", sandbox.ErrInvalid)
	case p.MaxConnections < 1 || p.MaxConnections > maxForwardConnections:
		return fmt.Errorf("ports.max_connections must be 1 to %d: %w", maxForwardConnections, sandbox.ErrInvalid)
	case g.Max < 0:
		return fmt.Errorf("gpu.max must be 0 (no maximum) or a count of GPUs: %w", sandbox.ErrInvalid)
	}
	if _, err := ParseGPUs(g.Default); err != nil {
		return fmt.Errorf("gpu.default %q must be \"\" (none), \"all\" or a count of GPUs: %w", g.Default, sandbox.ErrInvalid)
	}
	return nil
}

// ParseGPUs reads a gpus value: 0 for "", -1 for "all", else the count.
func ParseGPUs(s string) (int, error) {
	switch s {
	case "", "0":
		return 0, nil
	case sandbox.GPUsAll:
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 64 {
		return 0, fmt.Errorf("gpus %q is not valid: use \"all\" or a count from 1 to 64: %w", s, sandbox.ErrInvalid)
	}
	return n, nil
}
