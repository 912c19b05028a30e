// Package execgate is the one way every process the engine starts in a sandbox
// reaches the container runtime: calls' execs, kernels, port forwards'
// relays, the file tools, the disk watch's kill, installs. Its Runtime wraps
// the engine's runtime.Runtime and adds, once, what each of them would
// otherwise do on its own: a pooled sandbox's env passed with every exec
// (SetEnv), and the hold an install puts on a sandbox's processes while it
// has the sandbox online (Hold, Holding). Every package under engine/internal
// gets this Runtime, so a kernel's exec goes from package kernel to here to
// the runtime.
package execgate

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/sandtray/sandtray/engine/internal/agentclient"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Runtime passes a sandbox's env to every process the engine starts in it,
// for sandboxes taken from the warm pool with an env: Docker has no way to
// change a running container's env (ContainerUpdate changes resources
// only), and it would reach nothing anyway. The container's own main process
// is an init and a sleep that never read it; every process that runs code
// (commands, kernels, scripts, installs, file tools) is an exec the engine
// starts, and an exec's env is added to the container's by Docker exactly
// as Config.Env would be, with a call's own env after it (so it wins). The
// env also lives in the sandbox's spec, so commit and Dockerfile export
// carry it as for any other sandbox; only `docker inspect` does not show it.
type Runtime struct {
	runtime.Full

	mu      sync.RWMutex
	env     map[string][]string      // guarded by mu: container id → KEY=value list
	running map[string]int           // guarded by mu: container id → execs in flight (see ExecsIn)
	held    map[string]chan struct{} // guarded by mu: container id → closed when an install lets processes in again (hold.go)
	waiting map[string]int           // guarded by mu: container id → processes waiting at its gate
	// starting counts, by container id, the streams (relays) and the
	// session's processes that have not started yet (see StartingIn);
	// guarded by mu.
	starting map[string]int
	agent    *runtime.Agent // guarded by mu: see SetAgent
	log      *slog.Logger   // guarded by mu

	sess  sessions // agent.go
	links links    // link.go
}

// New wraps rt.
func New(rt runtime.Full) *Runtime {
	return &Runtime{Full: rt, env: map[string][]string{}, running: map[string]int{},
		held: map[string]chan struct{}{}, waiting: map[string]int{}, starting: map[string]int{},
		sess: sessions{m: map[string]*agentclient.Session{}, dialing: map[string]chan struct{}{}}}
}

// ExecsIn counts the execs in flight in container id, started or about to
// be (a stream's until Docker has started its process): an install's
// freeze waits until each has a process it can stop.
func (x *Runtime) ExecsIn(id string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.running[id]
}

// StartingIn counts the streams in container id whose process has not
// started yet: an install's freeze waits until none is left, for a process
// not there yet is one no pass can stop.
func (x *Runtime) StartingIn(id string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.starting[id]
}

// SetEnv makes env part of every exec in container id from now on.
func (x *Runtime) SetEnv(id string, env map[string]string) {
	x.mu.Lock()
	x.env[id] = sandbox.EnvList(env)
	x.mu.Unlock()
}

// Exec runs o with the container's env first, through the gate (hold.go):
// through the container's session with its agent when o is of the
// session's user and not an install's, else with an exec of the agent's
// process wrapper (see agent.go). A program the sandbox lacks fails with
// an error wrapping sandbox.ErrNotFound.
func (x *Runtime) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	x.mu.RLock()
	env := x.env[id]
	x.mu.RUnlock()
	if len(env) > 0 {
		o.Env = append(slices.Clone(env), o.Env...)
	}
	if code, ok, err := x.spawn(ctx, id, o); ok {
		return code, err
	}
	leave, err := x.enter(ctx, id)
	if err != nil {
		return -1, err
	}
	defer leave()
	o.Cmd, o.Workdir = wrapped(o), ""
	if o.Marker != "" {
		o.Env = append(slices.Clip(o.Env), "SANDTRAY_EXEC="+o.Marker) // the wrapper itself is swept too
	}
	return x.Full.Exec(ctx, id, o)
}

// Remove forgets the container's env, session and link with the container.
func (x *Runtime) Remove(ctx context.Context, id string) error {
	x.Forget(id)
	err := x.Full.Remove(ctx, id)
	if err == nil || errors.Is(err, sandbox.ErrNotFound) {
		x.dropLink(id, true)
	}
	if err == nil {
		x.mu.Lock()
		delete(x.env, id)
		x.mu.Unlock()
	}
	return err
}
