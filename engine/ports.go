package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
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
	if err := e.checkExpose(port, hostPort); err != nil {
		return sandbox.PortForward{}, err
	}
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.PortForward{}, err
	}
	defer e.release(b)
	if fw, ok := e.ports.Get(b.id, port); ok {
		if hostPort != 0 && hostPort != fw.HostPort {
			return sandbox.PortForward{}, fmt.Errorf("port %d of sandbox %s is already forwarded to %s; unexpose_port it first to use host port %d: %w",
				port, b.name, fw.URL, hostPort, sandbox.ErrConflict)
		}
		return forwardOf(fw), nil
	}
	if e.ports.Count(b.id) >= e.cfg.Ports.MaxPerSandbox {
		return sandbox.PortForward{}, e.tooManyPorts(b)
	}
	if err := e.ensureRunning(ctx, b); err != nil {
		return sandbox.PortForward{}, err
	}
	fw, err := e.startForward(ctx, b, port, hostPort)
	if err != nil {
		return sandbox.PortForward{}, err
	}
	e.savePorts(b)
	e.record(b.id, sandbox.Activity{Tool: "expose_port", Client: owner.Client, Input: fmt.Sprintf("%d → %s", port, fw.URL)})
	e.publish()
	return fw, nil
}

// checkExpose applies the config's policy to an expose_port request.
func (e *Engine) checkExpose(port, hostPort int) error {
	switch {
	case port < 1 || port > 65535:
		return fmt.Errorf("port %d is not a TCP port: use 1 to 65535: %w", port, sandbox.ErrInvalid)
	case hostPort != 0 && (hostPort < 1024 || hostPort > 65535):
		return fmt.Errorf("host_port %d is not allowed: use 1024 to 65535, or omit it to get a free port: %w", hostPort, sandbox.ErrInvalid)
	case slices.Contains(e.cfg.Ports.Forbidden, port):
		return fmt.Errorf("port %d may not be exposed: the user's config forbids it (ports.forbidden): %w", port, sandbox.ErrForbidden)
	case e.cfg.Ports.MaxPerSandbox == 0:
		return fmt.Errorf("exposing ports is turned off by the user's config (ports.max_per_sandbox = 0): %w", sandbox.ErrForbidden)
	}
	return nil
}

// startForward finds the sandbox's relay program and starts listening.
func (e *Engine) startForward(ctx context.Context, b *box, port, hostPort int) (sandbox.PortForward, error) {
	opener := execOpener{d: e.docker, id: b.id}
	helper, err := portfwd.Probe(ctx, opener)
	if err != nil {
		return sandbox.PortForward{}, e.gone(b, fmt.Errorf("expose port %d of sandbox %s: %w", port, b.name, err))
	}
	f, err := portfwd.Start(ctx, portfwd.Options{
		Opener: opener, Helper: helper, Port: port, HostPort: hostPort,
		MaxConns: e.cfg.Ports.MaxConnections, Log: e.log.With("sandbox", b.name),
	})
	if errors.Is(err, syscall.EADDRINUSE) {
		return sandbox.PortForward{}, fmt.Errorf("host port %d is in use on this machine; pick another host_port or omit it to get a free one: %w", hostPort, sandbox.ErrConflict)
	}
	if err != nil {
		return sandbox.PortForward{}, fmt.Errorf("expose port %d of sandbox %s: %w", port, b.name, err)
	}
	added, full := e.ports.Add(b.id, f, e.cfg.Ports.MaxPerSandbox)
	if !added {
		f.Close()
	}
	if full { // concurrent exposes of other ports took the last places
		return sandbox.PortForward{}, e.tooManyPorts(b)
	}
	fw, _ := e.ports.Get(b.id, port) // ours, or a concurrent expose's of the same port
	return forwardOf(fw), nil
}

func (e *Engine) tooManyPorts(b *box) error {
	limit := e.cfg.Ports.MaxPerSandbox
	return fmt.Errorf("sandbox %s already has %d forwarded ports, the most the config allows (ports.max_per_sandbox = %d); unexpose_port one first: %w",
		b.name, limit, limit, sandbox.ErrForbidden)
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
	e.changeState(b, "port forwards", func(st *boxState) { st.Ports = e.portsOf(b.id) })
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

// portsOf lists a sandbox's live forwards. Lock order: e.mu, then the set's.
func (e *Engine) portsOf(id string) []sandbox.PortForward {
	var out []sandbox.PortForward
	for _, fw := range e.ports.List(id) {
		out = append(out, forwardOf(fw))
	}
	return out
}

func forwardOf(fw portfwd.Entry) sandbox.PortForward {
	return sandbox.PortForward{Port: fw.Port, HostPort: fw.HostPort, URL: fw.URL}
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
			e.restoreBox(ctx, b, saved)
		}
		e.savePorts(b)
	}
}

func (e *Engine) restoreBox(ctx context.Context, b *box, saved []sandbox.PortForward) {
	ctx, cancel := context.WithTimeout(ctx, portRestoreTimeout)
	defer cancel()
	for _, fw := range saved {
		_, err := e.startForward(ctx, b, fw.Port, fw.HostPort)
		if errors.Is(err, sandbox.ErrConflict) {
			_, err = e.startForward(ctx, b, fw.Port, 0)
		}
		if err != nil {
			e.log.Warn("restore port forward", "sandbox", b.name, "port", fw.Port, "err", err)
		}
	}
}
