package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/engine"
)

// checkGPU says whether sandboxes can have NVIDIA GPUs (create_sandbox's
// gpus) and which sandboxes hold some. GPUs are optional: a host without
// them fails only when the config gives every sandbox GPUs by default.
func checkGPU(_ context.Context, e *Env) []Line {
	d, g := e.Docker, e.Config.GPU
	lines := checkToolkit(d.Toolkit)
	if d.Version == "" {
		return append(lines, Line{Info, "gpu", "not checked, no Docker", ""})
	}
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

// checkToolkit names an NVIDIA Container Toolkit on this host older than
// engine.MinGPUToolkit: its hooks load what a container's LD_PRELOAD names,
// as root on the host, at the container's start (CVE-2025-23266), so an
// image with GPUs, or any container under NVIDIA's runtime as Docker's
// default, can take the host. A host without the toolkit gets no line.
func checkToolkit(tk engine.GPUToolkit) []Line {
	upgrade := "upgrade the NVIDIA Container Toolkit to " + engine.MinGPUToolkit + " or later (e.g. `sudo apt-get install --only-upgrade nvidia-container-toolkit`) and restart Docker"
	switch {
	case tk.Path == "":
		return nil
	case tk.Version == "":
		return []Line{{Warn, "gpu", fmt.Sprintf("the NVIDIA Container Toolkit's %s did not say its version (%q); %s or later is needed (CVE-2025-23266)",
			tk.Path, tk.Output, engine.MinGPUToolkit), "run `" + tk.Path + " --version`, and " + upgrade + " if it is older"}}
	case tk.TooOld:
		return []Line{{Warn, "gpu", fmt.Sprintf("the NVIDIA Container Toolkit is %s (%s), older than %s: its hooks run what a container's "+
			"LD_PRELOAD names as root on the host (CVE-2025-23266), so a sandbox with GPUs can take the host", tk.Version, tk.Path, engine.MinGPUToolkit), upgrade}}
	}
	return []Line{{OK, "gpu", fmt.Sprintf("the NVIDIA Container Toolkit is %s (%s or later: CVE-2025-23266 is fixed)", tk.Version, engine.MinGPUToolkit), ""}}
}
