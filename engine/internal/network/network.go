// Package network is the engine's side of the sandboxes' network: the
// egress gate's glue (each egress sandbox's channel to engine/internal/egress,
// its approvals in its state, each decision in its activity log, an
// install's way to its package hosts), the secrets the gate puts in, and
// the port forwards of engine/internal/portfwd (expose_port, the forwards
// saved in a sandbox's state and brought back at start-up).
//
// Its type, Network, holds the gate, the channels and the port table, and
// carries the methods the front-ends call (EgressPending, AnswerEgress,
// RequestNetwork, ListSecrets, ExposePort, …); the engine embeds it, so they
// are the Engine's. It reaches the engine's registry, activity records and
// notices only through Host and Box, which the engine implements.
package network

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/internal/egress"
	"github.com/sandtray/sandtray/engine/internal/portfwd"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Network is the engine's network part: the egress gate and each running
// egress sandbox's channel to it, the secrets, and the port forwards.
type Network struct {
	host  Host
	execs Execs
	log   *slog.Logger
	ports *portfwd.Ports // the sandboxes' port forwards (ports.go)

	gate  *egress.Gate
	mu    sync.Mutex
	chans map[string]*egress.Channel // by sandbox id; guarded by mu
	// secrets are the configured secrets with their values, read at start
	// (secrets.go); ca is the gate's CA for their hosts, nil without any.
	secrets []secretState
	ca      *egress.CA
}

// Host is what the part reaches of the engine's centre: its registry of
// sandboxes, their activity logs, the watchers and its lifetime.
type Host interface {
	// Resolve finds sandbox ref (id, id prefix or name).
	Resolve(ref string) (Box, error)
	// Acquire finds sandbox ref and holds it busy, as a call does, until
	// release.
	Acquire(ref string) (b Box, release func(), err error)
	// Lookup is sandbox id, when the engine has it.
	Lookup(id string) (Box, bool)
	// Boxes lists the engine's sandboxes.
	Boxes() []Box
	// Record adds a to sandbox id's activity log.
	Record(id string, a sandbox.Activity)
	// Publish tells the watchers that what they show changed.
	Publish()
	// Go runs f on a goroutine of its own within the engine's lifetime,
	// with the engine's base context; not at all once the engine closes.
	Go(f func(base context.Context))
	// Delete removes sandbox ref, as delete_sandbox does for owner.
	Delete(ctx context.Context, owner sandbox.Owner, ref string) error
}

// Box is one sandbox of the engine's registry.
type Box interface {
	ID() string
	Name() string
	// Spec is what it was made with; it never changes.
	Spec() sandbox.Spec
	// State is what its state and status are now.
	State() State
	// SaveEgress applies change to its own egress rules and saves its state
	// at once (unless it is gone).
	SaveEgress(change func(*sandbox.EgressRules))
	// SavePorts keeps fws as its forwards in its state.
	SavePorts(fws []sandbox.PortForward)
	// EnsureRunning starts it when it is stopped.
	EnsureRunning(ctx context.Context) error
	// Gone is err, or what says the sandbox was removed behind the
	// engine's back when it was.
	Gone(err error) error
}

// State is what the part reads of a sandbox's state and status, at one
// moment.
type State struct {
	Client     string // its owner's client
	Egress     sandbox.EgressRules
	Ports      []sandbox.PortForward
	Persistent bool
	Running    bool
	// Installing: an install holds its gate now (InstallGate).
	Installing bool
}

// Execs is what the part runs in a sandbox, through
// engine/internal/execgate: its agent's session, a session of an
// install's own, and the agent's own commands.
type Execs interface {
	portfwd.Docker
	NewSession(ctx context.Context, id string) (*agentclient.Session, error)
	ExecAgent(ctx context.Context, id, user string, args []string, stdin io.Reader, max int) ([]byte, error)
}

// New makes the network part for cfg: the egress gate of its [egress] rules
// and [secrets], recording in the state dir, and the table of port
// forwards of its [ports] policy, which it returns too: the engine reads
// it for its lists, and ends a sandbox's forwards when it stops or goes.
func New(cfg config.Config, x Execs, host Host, log *slog.Logger) (*Network, *portfwd.Ports, error) {
	n := &Network{host: host, execs: x, log: log, chans: map[string]*egress.Channel{}}
	lo, hi := cfg.Ports.HostPorts()
	n.ports = portfwd.NewPorts(portfwd.Policy{Forbidden: cfg.Ports.Forbidden, MaxPerSandbox: cfg.Ports.MaxPerSandbox,
		MaxConns: cfg.Ports.MaxConnections, HostRange: portfwd.HostRange{Lo: lo, Hi: hi}}, portfwd.Agents(x), n.savePorts, log)
	if err := n.newGate(cfg); err != nil {
		return nil, nil, err
	}
	return n, n.ports, nil
}

// RestoreNetwork brings back, at start-up, the saved forwards of the
// persistent sandboxes that run (the others' are dropped), and starts the
// channels of the running egress sandboxes, off the start's path.
func (n *Network) RestoreNetwork(ctx context.Context) {
	n.ports.RestoreAll(ctx, n.savedPorts())
	n.egressRestore()
}
