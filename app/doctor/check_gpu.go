package doctor

import (
	"context"
	"strings"
)

// checkGPU says whether sandboxes can have NVIDIA GPUs (create_sandbox's
// gpus) and which sandboxes hold some. GPUs are optional: a host without
// them fails only when the config gives every sandbox GPUs by default.
func checkGPU(_ context.Context, e *Env) []Line {
	d, g := e.Docker, e.Config.GPU
	if d.Version == "" {
		return []Line{{Info, "gpu", "not checked, no Docker", ""}}
	}
	var lines []Line
	switch {
	case !g.Allow:
		lines = append(lines, Line{Info, "gpu", "GPUs are turned off (gpu.allow = false)", ""})
	case d.GPU.Available:
		lines = append(lines, Line{OK, "gpu", "sandboxes can have NVIDIA GPUs (" + d.GPU.Method + "): " + d.GPU.Detail, ""})
	case g.Default != "":
		lines = append(lines, Line{Fail, "gpu", "gpu.default is " + g.Default + " but " + d.GPU.Detail,
			"install the NVIDIA Container Toolkit on the Docker host, or remove gpu.default from config.toml"})
	default:
		lines = append(lines, Line{Info, "gpu", "no GPUs on this Docker host (optional: only create_sandbox's gpus needs them)", ""})
	}
	if len(d.GPUHolders) > 0 {
		lines = append(lines, Line{Info, "gpu", "sandboxes holding GPUs: " + strings.Join(d.GPUHolders, ", "), ""})
	}
	return lines
}
