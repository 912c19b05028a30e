package engine

import (
	"context"
	"slices"
	"sync"

	"github.com/sandtray/sandtray/engine/runtime"
)

// execEnv passes a sandbox's env to every process the engine starts in it,
// for sandboxes taken from the warm pool with an env: Docker has no way to
// change a running container's env (ContainerUpdate changes resources
// only), and it would reach nothing anyway. The container's own main process
// is an init and a sleep that never read it; every process that runs code
// (commands, kernels, scripts, installs, file tools) is an exec the engine
// starts, and an exec's env is added to the container's by Docker exactly
// as Config.Env would be, with a call's own env after it (so it wins). The
// env also lives in the sandbox's spec, so commit and Dockerfile export
// carry it as for any other sandbox; only `docker inspect` does not show it.
type execEnv struct {
	runtime.Runtime

	mu      sync.RWMutex
	env     map[string][]string      // guarded by mu: container id → KEY=value list
	running map[string]int           // guarded by mu: container id → execs in flight (see execsIn)
	held    map[string]chan struct{} // guarded by mu: container id → closed when an install lets processes in again (execgate.go)
	waiting map[string]int           // guarded by mu: container id → processes waiting at its gate
	// starting counts, by container id, the streams (relays) whose
	// process Docker has not started yet (see startingIn); guarded by mu.
	starting map[string]int
}

func withExecEnv(d runtime.Runtime) *execEnv {
	return &execEnv{Runtime: d, env: map[string][]string{}, running: map[string]int{},
		held: map[string]chan struct{}{}, waiting: map[string]int{}, starting: map[string]int{}}
}

// execsIn counts the execs in flight in container id, started or about to
// be (a stream's until Docker has started its process): an install's
// freeze waits until each has a process it can stop.
func (x *execEnv) execsIn(id string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.running[id]
}

// startingIn counts the streams in container id whose process has not
// started yet: an install's freeze waits until none is left, for a process
// not there yet is one no pass can stop.
func (x *execEnv) startingIn(id string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.starting[id]
}

// set makes env part of every exec in container id from now on.
func (x *execEnv) set(id string, env map[string]string) {
	x.mu.Lock()
	x.env[id] = envList(env)
	x.mu.Unlock()
}

// Exec runs o with the container's env first, through the gate (execgate.go).
func (x *execEnv) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	leave, err := x.enter(ctx, id)
	if err != nil {
		return -1, err
	}
	defer leave()
	x.mu.RLock()
	env := x.env[id]
	x.mu.RUnlock()
	if len(env) > 0 {
		o.Env = append(slices.Clone(env), o.Env...)
	}
	return x.Runtime.Exec(ctx, id, o)
}

// Remove forgets the container's env with the container.
func (x *execEnv) Remove(ctx context.Context, id string) error {
	err := x.Runtime.Remove(ctx, id)
	if err == nil {
		x.mu.Lock()
		delete(x.env, id)
		x.mu.Unlock()
	}
	return err
}

// Close and daemonInfo pass through to the client underneath.
func (x *execEnv) Close() error {
	if c, ok := x.Runtime.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

func (x *execEnv) ServerVersion(ctx context.Context) (string, error) {
	if d, ok := x.Runtime.(daemonInfo); ok {
		return d.ServerVersion(ctx)
	}
	return "", nil
}

func (x *execEnv) Host() string {
	if d, ok := x.Runtime.(daemonInfo); ok {
		return d.Host()
	}
	return ""
}

func (x *execEnv) HostSource() string {
	if d, ok := x.Runtime.(hostSourcer); ok {
		return d.HostSource()
	}
	return ""
}
