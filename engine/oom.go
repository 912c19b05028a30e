package engine

import (
	"context"
)

// killedForMemory reports whether the kernel's OOM killer struck in the
// sandbox since the engine last looked: a SIGKILL exit alone could be anyone's
// kill -9, so the cgroup's own count decides. It costs one exec, and only
// runs after a call ended by SIGKILL or lost its process. Where the sandbox
// cannot tell (it refused the exec: under gVisor, running out of memory
// stops the whole sandbox), Docker's record of the container's end decides.
func (e *Engine) killedForMemory(ctx context.Context, b *box) bool {
	t := boxTarget{e, b}
	n, ok, err := e.runner.OOMKills(ctx, t)
	if err != nil {
		return e.runner.DiedOfMemory(ctx, t)
	}
	if !ok {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	rose := n > b.oomKills
	b.oomKills = n
	return rose
}
