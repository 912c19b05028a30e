package config

import (
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Egress is the [egress] section: the rules of the egress gate that
// sandboxes of network "egress" reach the outside through.
type Egress struct {
	// Allow, when set (even to []), replaces the default list: the package
	// indexes install_packages uses (egress.DefaultAllow).
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
	// Ask makes a connection no rule matches wait for the user's answer
	// (the tray app, or `sandtray egress allow|deny`) up to AskTimeout.
	Ask        bool     `toml:"ask"`
	AskTimeout Duration `toml:"ask_timeout"`
	// HostPorts are the ports of the host's 127.0.0.1 a sandbox may reach
	// as host.sandtray.internal:PORT.
	HostPorts []int `toml:"host_ports"`
	// TrustCA is a PEM file of CAs the gate trusts, besides the system's,
	// for the hosts whose TLS it terminates (those a secret is bound to):
	// a private CA.
	TrustCA string `toml:"trust_ca"`
}

// defaultEgress is the section with no config file.
func defaultEgress() Egress { return Egress{AskTimeout: Duration{60 * time.Second}} }

// validateEgress checks [egress] and sandbox.network's modes, naming the bad key.
func (c *Config) validateEgress() error {
	e := c.Egress
	if _, err := hostrule.ParseList("egress.allow", e.Allow, hostrule.SourceConfig); err != nil {
		return err
	}
	if _, err := hostrule.ParseList("egress.deny", e.Deny, hostrule.SourceConfig); err != nil {
		return err
	}
	if e.AskTimeout.Duration < time.Second || e.AskTimeout.Duration > time.Hour {
		return fmt.Errorf("egress.ask_timeout must be from 1s to 1h: %w", sandbox.ErrInvalid)
	}
	for i, p := range e.HostPorts {
		if p < 1 || p > 65535 {
			return fmt.Errorf("egress.host_ports[%d] %d must be a port from 1 to 65535: %w", i, p, sandbox.ErrInvalid)
		}
	}
	return nil
}

// ValidNetwork reports whether n is a network mode a sandbox may have.
func ValidNetwork(n string) bool {
	return n == sandbox.NetworkNone || n == sandbox.NetworkBridge || n == sandbox.NetworkEgress
}
