package engine

import (
	"context"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/network"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// networkPart is the egress gate's glue, the secrets and the port forwards
// (engine/internal/network), embedded in Engine so that its methods
// (EgressPending, RequestNetwork, ListSecrets, ExposePort, …) are the Engine's.
type networkPart = network.Network

// SecretInfo is what list_secrets tells a model of one secret: never its
// value.
type SecretInfo = network.SecretInfo

// SecretsBackend says where secrets without env or file are kept: the OS
// keychain, or the fallback file (doctor says which).
func SecretsBackend(cfg config.Config) (where string, keychainUsed bool) {
	return network.SecretsBackend(cfg)
}

// SecretsStatus is ListSecrets for cfg without an engine (doctor): each
// configured secret, and whether its value can be read now.
func SecretsStatus(cfg config.Config) []SecretInfo { return network.SecretsStatus(cfg) }

// netHost is the engine's centre as the network part reaches it.
type netHost struct{ e *Engine }

func (h netHost) Resolve(ref string) (network.Box, error) {
	b, err := h.e.reg.Resolve(ref)
	if err != nil {
		return nil, err
	}
	return netBox{h.e, b}, nil
}

func (h netHost) Acquire(ref string) (network.Box, func(), error) {
	b, err := h.e.reg.Acquire(ref)
	if err != nil {
		return nil, nil, err
	}
	return netBox{h.e, b}, func() { h.e.release(b) }, nil
}

func (h netHost) Lookup(id string) (network.Box, bool) {
	b, ok := h.e.reg.BoxOf(id)
	return netBox{h.e, b}, ok
}

func (h netHost) Boxes() (out []network.Box) {
	h.e.reg.Locked(func() {
		for _, b := range h.e.reg.BoxesLocked() {
			out = append(out, netBox{h.e, b})
		}
	})
	return out
}

func (h netHost) Record(id string, a sandbox.Activity) { h.e.record(id, a) }
func (h netHost) Publish()                             { h.e.publish() }

func (h netHost) Go(f func(base context.Context)) {
	if h.e.reg.Enter() != nil {
		return
	}
	go func() {
		defer h.e.reg.Leave()
		f(h.e.reg.Base())
	}()
}

func (h netHost) Delete(ctx context.Context, owner sandbox.Owner, ref string) error {
	return h.e.Delete(ctx, owner, ref)
}

// netBox is one sandbox of the registry as the network part sees it.
type netBox struct {
	e *Engine
	b *box
}

func (x netBox) ID() string                              { return x.b.ID }
func (x netBox) Name() string                            { return x.b.Name }
func (x netBox) Spec() sandbox.Spec                      { return x.b.Spec }
func (x netBox) EnsureRunning(ctx context.Context) error { return x.e.ensureRunning(ctx, x.b) }
func (x netBox) Gone(err error) error                    { return x.e.gone(x.b, err) }

func (x netBox) State() (st network.State) {
	x.e.reg.Locked(func() {
		s := x.b.State
		st = network.State{Client: s.Owner.Client, Egress: s.Egress, Ports: s.Ports, Persistent: s.Persistent,
			Running: x.b.Status == sandbox.StatusRunning, Installing: x.b.Installing()}
	})
	return st
}

func (x netBox) SaveEgress(change func(*sandbox.EgressRules)) {
	x.e.changeState(x.b, "egress rules", func(st *boxState) { change(&st.Egress) })
}

func (x netBox) SavePorts(fws []sandbox.PortForward) {
	x.e.changeState(x.b, "port forwards", func(st *boxState) { st.Ports = fws })
}
