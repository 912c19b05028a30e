package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/portfwd"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// execOpener starts relay processes in one sandbox (portfwd.Opener).
type execOpener struct {
	d  dockerAPI
	id string
}

func (o execOpener) Open(ctx context.Context, cmd []string) (portfwd.Stream, error) {
	return o.d.ExecStream(ctx, o.id, "", cmd)
}

// portRestoreTimeout bounds bringing back one sandbox's forwards at start-up.
const portRestoreTimeout = 30 * time.Second

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
	sb := e.portSandbox(b)
	if fw, ok, err := e.ports.Existing(sb, port, hostPort); ok {
		return fw, err
	}
	if err := e.ports.Full(sb); err != nil {
		return sandbox.PortForward{}, err
	}
	if err := e.ensureRunning(ctx, b); err != nil {
		return sandbox.PortForward{}, err
	}
	helper, err := portfwd.Probe(ctx, sb.Opener)
	if err != nil {
		return sandbox.PortForward{}, e.gone(b, fmt.Errorf("expose port %d of sandbox %s: %w", port, b.name, err))
	}
	fw, err := e.ports.Start(ctx, sb, helper, port, hostPort)
	if err != nil {
		return sandbox.PortForward{}, err
	}
	e.savePorts(b)
	e.record(b.id, sandbox.Activity{Tool: "expose_port", Client: owner.Client, Input: fmt.Sprintf("%d → %s", port, fw.URL)})
	e.publish()
	return fw, nil
}

// portSandbox is b as the port table knows it.
func (e *Engine) portSandbox(b *box) portfwd.Sandbox {
	return portfwd.Sandbox{ID: b.id, Name: b.name, Opener: execOpener{d: e.docker, id: b.id}}
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
	e.savePorts(b)
	e.record(b.id, sandbox.Activity{Tool: "unexpose_port", Client: owner.Client, Input: fmt.Sprint(port)})
	e.publish()
	return nil
}

// endPorts ends a stopped sandbox's forwards; they do not come back.
func (e *Engine) endPorts(b *box) {
	if e.ports.RemoveBox(b.id) > 0 {
		e.savePorts(b)
		e.publish()
	}
}

// savePorts writes the sandbox's live forwards into its saved state.
func (e *Engine) savePorts(b *box) {
	e.changeState(b, "port forwards", func(st *boxState) { st.Ports = e.ports.Forwards(b.id) })
}

// changeState applies change to a sandbox's state under e.mu and saves it at
// once, unless the sandbox is gone; what names the change in a failure's log.
func (e *Engine) changeState(b *box, what string, change func(*boxState)) {
	e.mu.Lock()
	change(&b.state)
	st := b.state
	_, live := e.boxes[b.id]
	e.mu.Unlock()
	if !live {
		return
	}
	if err := e.store.save(b.id, st); err != nil {
		e.log.Error("save "+what, "sandbox", b.name, "err", err)
	}
}

// restorePorts brings back the saved forwards of running persistent
// sandboxes, on their old host ports when free. Saved forwards of other
// sandboxes are dropped.
func (e *Engine) restorePorts(ctx context.Context) {
	e.mu.Lock()
	var boxes []*box
	for _, b := range e.boxes {
		if len(b.state.Ports) > 0 {
			boxes = append(boxes, b)
		}
	}
	e.mu.Unlock()
	for _, b := range boxes {
		e.mu.Lock()
		saved, keep := b.state.Ports, b.state.Persistent && b.status == sandbox.StatusRunning
		e.mu.Unlock()
		if keep {
			rctx, cancel := context.WithTimeout(ctx, portRestoreTimeout)
			e.ports.Restore(rctx, e.portSandbox(b), saved)
			cancel()
		}
		e.savePorts(b)
	}
}
