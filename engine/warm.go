package engine

import (
	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// warmSoon starts sandbox id's python kernel in the background, right after
// its container started: the first execute_code then finds it started, or
// starting, instead of starting it after its request arrives (the kernel's
// start is most of what a new sandbox's first result costs beyond Docker's
// create and start). It waits on the kernel's slot, so a call that comes
// first simply starts the kernel itself. Only for sandboxes whose code runs
// on python's kernel by default.
func (e *Engine) warmSoon(id string, spec sandbox.Spec) {
	if !kernelFirst(spec) {
		return
	}
	e.kernels.WarmSoon(e.containerTarget(id, spec.Workdir), pool.Kernel)
}

// kernelFirst reports whether spec's code runs on python's kernel by
// default: its sandbox's kernel starts with it.
func kernelFirst(spec sandbox.Spec) bool {
	return spec.Language == "" || spec.Language == pool.Kernel
}

// containerTarget is a running container the engine has no box for (yet):
// a pooled one, or one just created.
func (e *Engine) containerTarget(id, workdir string) boxTarget {
	return boxTarget{e, &box{id: id, name: short(id), status: sandbox.StatusRunning, spec: sandbox.Spec{Workdir: workdir}}}
}
