package pool

import (
	"runtime"
	"slices"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// ConfigFrom is the pool's Config for the [pool] section c: its images (the
// default image when it names none), sorted and without repeats, and up to
// one fill per CPU at once (at least 2). sandboxName and scope are the
// engine's.
func ConfigFrom(c config.Pool, defaultImage string, sandboxName func(string) string, scope map[string]string) Config {
	images := c.Images
	if len(images) == 0 {
		images = []string{defaultImage}
	}
	return Config{
		Size: c.Size, Images: slices.Compact(slices.Sorted(slices.Values(images))), MaxTotal: c.MaxTotal,
		MemoryMB: c.MemoryMB, Idle: c.Idle.Duration, Parallel: max(2, runtime.NumCPU()),
		SandboxName: sandboxName, Scope: scope,
	}
}

// NoteUse tells the pool a sandbox of spec was made, when a spare could
// have served it: the pool learns the images in use and their bursts. A nil
// pool ignores it.
func (p *Pool) NoteUse(spec sandbox.Spec) {
	if p == nil {
		return
	}
	if base, err := p.cfg.Spec(spec.Image); err == nil && Adjustable(base, spec) {
		p.Note(spec.Image)
	}
}

// Adjusted is what the hand-out changed of a pooled container: its limits
// and env, which its spec label (written when it was pooled) cannot know.
// The engine keeps it in the sandbox's state file.
type Adjusted struct {
	MemoryMB int64             `json:"memory_mb"`
	CPUs     float64           `json:"cpus"`
	Env      map[string]string `json:"env,omitempty"`
}

// AdjustedFrom is what a sandbox of spec taken from the pool has that its
// labels do not say.
func AdjustedFrom(spec sandbox.Spec) *Adjusted {
	return &Adjusted{MemoryMB: spec.MemoryMB, CPUs: spec.CPUs, Env: spec.Env}
}

// Restore puts back into spec, read from the container's labels, what the
// hand-out changed; a nil Adjusted changes nothing.
func (a *Adjusted) Restore(spec *sandbox.Spec) {
	if a != nil {
		spec.MemoryMB, spec.CPUs, spec.Env = a.MemoryMB, a.CPUs, a.Env
	}
}
