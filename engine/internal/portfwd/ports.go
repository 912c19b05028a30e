package portfwd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"syscall"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Policy is what the user's config allows of forwards (its [ports] keys).
type Policy struct {
	Forbidden     []int // sandbox ports never forwarded
	MaxPerSandbox int   // forwards one sandbox may have; 0 turns forwarding off
	MaxConns      int   // connections one forward relays at once
	// HostRange is where forwards listen on the host (ports.host_range):
	// a host_port outside it is refused, and free ports are picked in it.
	HostRange HostRange
}

// Sandbox is the one a forward goes into: its id (the key in the Set), its
// name for messages and how to connect into it.
type Sandbox struct {
	ID, Name string
	Opener   Opener
}

// Ports is the forwards of every sandbox under one policy: the Set, the
// rules and errors of expose_port, and the saved lists (saved.go). It is
// safe for concurrent use.
type Ports struct {
	*Set
	policy Policy
	open   func(id string) Opener // connects into sandbox id
	onSave OnSave
	log    *slog.Logger
	// saveMu makes saves one at a time, so the list saved last is the
	// newest; it is held across onSave, and taken before any lock of its.
	saveMu sync.Mutex
}

// NewPorts returns an empty table under policy p, reaching sandboxes with
// open (see Agents) and telling onSave of each sandbox's forwards as they
// change.
func NewPorts(p Policy, open func(id string) Opener, onSave OnSave, log *slog.Logger) *Ports {
	return &Ports{Set: NewSet(), policy: p, open: open, onSave: onSave, log: log}
}

// Check applies the policy to a request, before any sandbox is looked at.
func (p *Ports) Check(port, hostPort int) error {
	switch {
	case port < 1 || port > 65535:
		return fmt.Errorf("port %d is not a TCP port: use 1 to 65535: %w", port, sandbox.ErrInvalid)
	case hostPort != 0 && (hostPort < 1024 || hostPort > 65535):
		return fmt.Errorf("host_port %d is not allowed: use 1024 to 65535, or omit it to get a free port: %w", hostPort, sandbox.ErrInvalid)
	case hostPort != 0 && !p.policy.HostRange.Contains(hostPort):
		return fmt.Errorf("host_port %d is outside the host ports the user's config allows (ports.host_range = %q); use one from %d to %d, or omit host_port to get a free one: %w",
			hostPort, p.policy.HostRange.String(), p.policy.HostRange.Lo, p.policy.HostRange.Hi, sandbox.ErrForbidden)
	case slices.Contains(p.policy.Forbidden, port):
		return fmt.Errorf("port %d may not be exposed: the user's config forbids it (ports.forbidden): %w", port, sandbox.ErrForbidden)
	case p.policy.MaxPerSandbox == 0:
		return fmt.Errorf("exposing ports is turned off by the user's config (ports.max_per_sandbox = 0): %w", sandbox.ErrForbidden)
	}
	return nil
}

// Existing returns sb's forward of port when there is one (ok); err when it
// goes to another host port than the hostPort asked for (0: any).
func (p *Ports) Existing(sb Sandbox, port, hostPort int) (fw sandbox.PortForward, ok bool, err error) {
	e, ok := p.Get(sb.ID, port)
	if !ok {
		return sandbox.PortForward{}, false, nil
	}
	if hostPort != 0 && hostPort != e.HostPort {
		return sandbox.PortForward{}, true, fmt.Errorf("port %d of sandbox %s is already forwarded to %s; unexpose_port it first to use host port %d: %w",
			port, sb.Name, e.URL, hostPort, sandbox.ErrConflict)
	}
	return forwardOf(e), true, nil
}

// Full is the error for a sandbox that has all the forwards the policy
// allows, or nil.
func (p *Ports) Full(sb Sandbox) error {
	if p.Count(sb.ID) >= p.policy.MaxPerSandbox {
		return p.tooMany(sb)
	}
	return nil
}

func (p *Ports) tooMany(sb Sandbox) error {
	limit := p.policy.MaxPerSandbox
	return fmt.Errorf("sandbox %s already has %d forwarded ports, the most the config allows (ports.max_per_sandbox = %d); unexpose_port one first: %w",
		sb.Name, limit, limit, sandbox.ErrForbidden)
}

// Start starts listening on hostPort (0: a free one) for sb's port, and
// records the forward.
func (p *Ports) Start(ctx context.Context, sb Sandbox, port, hostPort int) (sandbox.PortForward, error) {
	f, err := Start(ctx, Options{
		Opener: sb.Opener, Port: port, HostPort: hostPort, HostRange: p.policy.HostRange,
		MaxConns: p.policy.MaxConns, Log: p.log.With("sandbox", sb.Name),
	})
	if errors.Is(err, syscall.EADDRINUSE) {
		return sandbox.PortForward{}, fmt.Errorf("host port %d is in use on this machine; pick another host_port or omit it to get a free one: %w", hostPort, sandbox.ErrConflict)
	}
	if err != nil {
		return sandbox.PortForward{}, fmt.Errorf("expose port %d of sandbox %s: %w", port, sb.Name, err)
	}
	added, full := p.Add(sb.ID, f, p.policy.MaxPerSandbox)
	if !added {
		f.Close()
	}
	if full { // concurrent exposes of other ports took the last places
		return sandbox.PortForward{}, p.tooMany(sb)
	}
	e, _ := p.Get(sb.ID, port) // ours, or a concurrent expose's of the same port
	return forwardOf(e), nil
}

// Restore brings back saved forwards of sb, on their old host ports when
// free and still in ports.host_range, else on free ones; a forward that
// cannot come back is logged.
func (p *Ports) Restore(ctx context.Context, sb Sandbox, saved []sandbox.PortForward) {
	for _, fw := range saved {
		_, err := p.Start(ctx, sb, fw.Port, p.restorable(fw.HostPort))
		if errors.Is(err, sandbox.ErrConflict) {
			_, err = p.Start(ctx, sb, fw.Port, 0)
		}
		if err != nil {
			p.log.Warn("restore port forward", "sandbox", sb.Name, "port", fw.Port, "err", err)
		}
	}
}

// Forwards lists a sandbox's live forwards.
func (p *Ports) Forwards(id string) []sandbox.PortForward {
	var out []sandbox.PortForward
	for _, e := range p.List(id) {
		out = append(out, forwardOf(e))
	}
	return out
}

func forwardOf(e Entry) sandbox.PortForward {
	return sandbox.PortForward{Port: e.Port, HostPort: e.HostPort, URL: e.URL}
}

// restorable is the host port a saved forward asks for again: its old one,
// or 0 (a free one) when the config's range no longer holds it.
func (p *Ports) restorable(hostPort int) int {
	if !p.policy.HostRange.Contains(hostPort) {
		return 0
	}
	return hostPort
}
