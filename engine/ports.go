package engine

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
func (e *Engine) ExposePort(ctx context.Context, owner sandbox.Owner, ref string, port, hostPort int) (sandbox.PortForward, error) {
	if err := e.ports.Check(port, hostPort); err != nil {
		return sandbox.PortForward{}, err
	}
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.PortForward{}, err
	}
	defer e.release(b)
	sb := e.ports.Sandbox(b.id, b.name)
	if fw, ok, err := e.ports.Existing(sb, port, hostPort); ok {
		return fw, err
	}
	if err := e.ports.Full(sb); err != nil {
		return sandbox.PortForward{}, err
	}
	if err := e.ensureRunning(ctx, b); err != nil {
		return sandbox.PortForward{}, err
	}
	if _, err := e.execs.Agent(ctx, b.id); err != nil {
		return sandbox.PortForward{}, e.gone(b, fmt.Errorf("expose port %d of sandbox %s: %w", port, b.name, err))
	}
	fw, err := e.ports.Start(ctx, sb, port, hostPort)
	if err != nil {
		return sandbox.PortForward{}, err
	}
	e.ports.Save(b.id)
	e.record(b.id, sandbox.Activity{Tool: "expose_port", Client: owner.Client, Input: fmt.Sprintf("%d → %s", port, fw.URL)})
	e.publish()
	return fw, nil
}

// UnexposePort ends a sandbox's forward of port.
func (e *Engine) UnexposePort(ctx context.Context, owner sandbox.Owner, ref string, port int) error {
	b, err := e.acquire(ref)
	if err != nil {
		return err
	}
	defer e.release(b)
	if !e.ports.Remove(b.id, port) {
		return fmt.Errorf("port %d of sandbox %s is not exposed; list_sandboxes shows its forwarded ports: %w", port, b.name, sandbox.ErrNotFound)
	}
	e.ports.Save(b.id)
	e.record(b.id, sandbox.Activity{Tool: "unexpose_port", Client: owner.Client, Input: fmt.Sprint(port)})
	e.publish()
	return nil
}

// savePorts keeps a sandbox's forwards in its state, as the port table
// changes them.
func (e *Engine) savePorts(id string, fws []sandbox.PortForward) {
	b, ok := e.boxOf(id)
	if ok {
		e.changeState(b, "port forwards", func(st *boxState) { st.Ports = fws })
	}
}

// savedPorts lists the sandboxes with forwards in their state, those to
// come back at start-up (persistent and running) marked so.
func (e *Engine) savedPorts() []portfwd.Saved {
	var out []portfwd.Saved
	e.locked(func() {
		for _, b := range e.boxes {
			if len(b.state.Ports) > 0 {
				out = append(out, portfwd.Saved{ID: b.id, Name: b.name, Ports: b.state.Ports,
					Restore: b.state.Persistent && b.status == sandbox.StatusRunning})
			}
		}
	})
	return out
}

// changeState applies change to a sandbox's state under the registry's lock and saves it at
// once, unless the sandbox is gone; what names the change in a failure's log.
func (e *Engine) changeState(b *box, what string, change func(*boxState)) {
	var st boxState
	live := false
	e.locked(func() {
		change(&b.state)
		st = b.state
		_, live = e.boxes[b.id]
	})
	if !live {
		return
	}
	if err := e.store.Save(b.id, st); err != nil {
		e.log.Error("save "+what, "sandbox", b.name, "err", err)
	}
}
