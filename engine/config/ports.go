package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Ports bounds expose_port: which sandbox ports may be forwarded to
// the host's loopback, and how many forwards and connections there may be.
type Ports struct {
	Forbidden      []int `toml:"forbidden"`       // sandbox ports expose_port refuses
	MaxPerSandbox  int   `toml:"max_per_sandbox"` // forwards one sandbox may have; 0 turns expose_port off
	MaxConnections int   `toml:"max_connections"` // connections one forward relays at once
	// HostRange is "LO-HI", the host ports forwards listen on: host_port
	// must be in it, and free ports are picked in it. The default, the
	// dynamic ports (RFC 6335), keeps a model off the ports local software
	// expects to find free (OAuth callbacks, dev servers on 3000 or 8080).
	HostRange string `toml:"host_range"`
}

// defaultHostRange is ports.host_range with no config file.
const defaultHostRange = "49152-65535"

// HostPorts returns ports.host_range as numbers. The config was validated
// when it loaded; an unparsable range here reads as the default.
func (p Ports) HostPorts() (lo, hi int) {
	lo, hi, err := parseHostRange(p.HostRange)
	if err != nil {
		lo, hi, _ = parseHostRange(defaultHostRange)
	}
	return lo, hi
}

// parseHostRange reads "LO-HI" with 1024 <= LO <= HI <= 65535.
func parseHostRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 1024 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("ports.host_range %q must be \"LO-HI\" with 1024 <= LO <= HI <= 65535, e.g. %q: %w", s, defaultHostRange, sandbox.ErrInvalid)
	}
	return lo, hi, nil
}

// GPU says whether and how many GPUs create_sandbox may give a sandbox.
type GPU struct {
	Allow   bool   `toml:"allow"`   // false refuses every gpus request
	Default string `toml:"default"` // gpus of a sandbox that asks for none: "", "all" or a count
	Max     int    `toml:"max"`     // most GPUs one sandbox may get; 0: no maximum ("all" allowed)
}

// defaultPortsConfig and defaultGPUConfig are the settings with no config file.
func defaultPortsConfig() Ports {
	return Ports{MaxPerSandbox: 8, MaxConnections: 64, HostRange: defaultHostRange}
}
func defaultGPUConfig() GPU { return GPU{Allow: true} }

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
	if _, _, err := parseHostRange(p.HostRange); err != nil {
		return err
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
