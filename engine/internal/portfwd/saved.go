package portfwd

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// A persistent sandbox's forwards outlive the engine: the table tells its
// OnSave about each sandbox's list whenever it changes (the engine keeps it
// in the sandbox's state), and RestoreAll brings them back at the next
// start from what the engine kept.

// OnSave hears that sandbox id's forwards are now fws (none: no forwards);
// failures to keep them are its to log. The table calls it one at a time,
// so the list it heard last is the newest.
type OnSave func(id string, fws []sandbox.PortForward)

// Saved is one sandbox's saved forwards, and whether they are to come back
// (the sandbox is persistent and running); the others are dropped.
type Saved struct {
	ID, Name string
	Ports    []sandbox.PortForward
	Restore  bool
}

// Docker is the runtime as relays need it: the sandbox's session with its
// agent, through the engine's exec gate.
type Docker interface {
	Agent(ctx context.Context, id string) (*agentclient.Session, error)
}

// AgentOpener connects into one container through its agent.
type AgentOpener struct {
	Docker Docker
	ID     string // the container
}

// Open connects to port on the container's loopback. Nothing listening
// there fails with an error wrapping agentclient.ErrRefused.
func (o AgentOpener) Open(ctx context.Context, port int) (Stream, error) {
	s, err := o.Docker.Agent(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	return s.Dial(ctx, port)
}

// Agents returns the opener of each container, through its agent.
func Agents(d Docker) func(id string) Opener {
	return func(id string) Opener { return AgentOpener{Docker: d, ID: id} }
}

// restoreTimeout bounds bringing back one sandbox's forwards at start-up.
const restoreTimeout = 30 * time.Second

// Sandbox is sandbox id, named name, as the table knows it.
func (p *Ports) Sandbox(id, name string) Sandbox {
	return Sandbox{ID: id, Name: name, Opener: p.open(id)}
}

// Save hands sandbox id's live forwards to OnSave.
func (p *Ports) Save(id string) {
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	p.onSave(id, p.Forwards(id))
}

// End ends sandbox id's forwards, which do not come back (it stopped), and
// reports whether it had any.
func (p *Ports) End(id string) bool {
	if p.RemoveBox(id) == 0 {
		return false
	}
	p.Save(id)
	return true
}

// RestoreAll brings back the saved forwards that are to come back
// (Saved.Restore), on their old host ports when free, and saves again what
// each sandbox has then: what the others saved is dropped.
func (p *Ports) RestoreAll(ctx context.Context, saved []Saved) {
	for _, s := range saved {
		if s.Restore {
			rctx, cancel := context.WithTimeout(ctx, restoreTimeout)
			p.Restore(rctx, p.Sandbox(s.ID, s.Name), s.Ports)
			cancel()
		}
		p.Save(s.ID)
	}
}
