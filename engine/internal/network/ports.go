package network

import (
	"context"
	"fmt"

	"github.com/sandtray/sandtray/engine/internal/portfwd"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// ExposePort forwards port inside a sandbox to 127.0.0.1:hostPort on this
// host (hostPort 0: a free one). Exposing a port already forwarded returns
// that forward. The forward ends with UnexposePort, when the sandbox stops or
// is deleted, and when the engine closes; a persistent sandbox's forwards
// come back when the engine starts again.
func (n *Network) ExposePort(ctx context.Context, owner sandbox.Owner, ref string, port, hostPort int) (sandbox.PortForward, error) {
	if err := n.ports.Check(port, hostPort); err != nil {
		return sandbox.PortForward{}, err
	}
	b, release, err := n.host.Acquire(ref)
	if err != nil {
		return sandbox.PortForward{}, err
	}
	defer release()
	sb := n.ports.Sandbox(b.ID(), b.Name())
	if fw, ok, err := n.ports.Existing(sb, port, hostPort); ok {
		return fw, err
	}
	if err := n.ports.Full(sb); err != nil {
		return sandbox.PortForward{}, err
	}
	if err := b.EnsureRunning(ctx); err != nil {
		return sandbox.PortForward{}, err
	}
	if _, err := n.execs.Agent(ctx, b.ID()); err != nil {
		return sandbox.PortForward{}, b.Gone(fmt.Errorf("expose port %d of sandbox %s: %w", port, b.Name(), err))
	}
	fw, err := n.ports.Start(ctx, sb, port, hostPort)
	if err != nil {
		return sandbox.PortForward{}, err
	}
	n.ports.Save(b.ID())
	n.host.Record(b.ID(), sandbox.Activity{Tool: "expose_port", Client: owner.Client, Input: fmt.Sprintf("%d → %s", port, fw.URL)})
	n.host.Publish()
	return fw, nil
}

// UnexposePort ends a sandbox's forward of port.
func (n *Network) UnexposePort(ctx context.Context, owner sandbox.Owner, ref string, port int) error {
	b, release, err := n.host.Acquire(ref)
	if err != nil {
		return err
	}
	defer release()
	if !n.ports.Remove(b.ID(), port) {
		return fmt.Errorf("port %d of sandbox %s is not exposed; list_sandboxes shows its forwarded ports: %w", port, b.Name(), sandbox.ErrNotFound)
	}
	n.ports.Save(b.ID())
	n.host.Record(b.ID(), sandbox.Activity{Tool: "unexpose_port", Client: owner.Client, Input: fmt.Sprint(port)})
	n.host.Publish()
	return nil
}

// savePorts keeps a sandbox's forwards in its state, as the port table
// changes them.
func (n *Network) savePorts(id string, fws []sandbox.PortForward) {
	if b, ok := n.host.Lookup(id); ok {
		b.SavePorts(fws)
	}
}

// savedPorts lists the sandboxes with forwards in their state, those to
// come back at start-up (persistent and running) marked so.
func (n *Network) savedPorts() []portfwd.Saved {
	var out []portfwd.Saved
	for _, b := range n.host.Boxes() {
		if st := b.State(); len(st.Ports) > 0 {
			out = append(out, portfwd.Saved{ID: b.ID(), Name: b.Name(), Ports: st.Ports, Restore: st.Persistent && st.Running})
		}
	}
	return out
}
