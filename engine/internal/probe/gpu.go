package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// GPUAsker is the Docker client asked about GPUs.
type GPUAsker interface {
	GPUSupport(context.Context) (runtime.GPUSupport, error)
}

// GPUs reports whether the Docker host d can give sandboxes NVIDIA GPUs,
// and how, or what to install. It asks Docker each time.
func GPUs(ctx context.Context, d GPUAsker) sandbox.GPUStatus {
	gpu, err := d.GPUSupport(ctx)
	if err != nil {
		return sandbox.GPUStatus{Detail: fmt.Sprintf("could not ask Docker: %v", err)}
	}
	return sandbox.GPUStatus{Available: gpu.Method != "", Method: gpu.Method, Detail: gpu.Detail}
}

// CheckGPUs applies the [gpu] config g to spec's gpus and refuses them on a
// Docker host without a GPU runtime, saying what to install.
func CheckGPUs(ctx context.Context, g config.GPU, d GPUAsker, spec sandbox.Spec) error {
	n, err := config.ParseGPUs(spec.GPUs)
	if err != nil || n == 0 {
		return err
	}
	switch {
	case !g.Allow:
		return fmt.Errorf("GPUs are turned off by the user's config (gpu.allow = false); create the sandbox without gpus: %w", sandbox.ErrForbidden)
	case g.Max > 0 && n < 0:
		return fmt.Errorf("gpus \"all\" is not allowed: the user's config allows at most %d GPUs per sandbox (gpu.max); ask for a count: %w", g.Max, sandbox.ErrForbidden)
	case g.Max > 0 && n > g.Max:
		return fmt.Errorf("gpus %d is more than the user's config allows per sandbox (gpu.max = %d): %w", n, g.Max, sandbox.ErrForbidden)
	}
	if st := GPUs(ctx, d); !st.Available {
		return fmt.Errorf("this sandbox cannot have GPUs: %s; or create the sandbox without gpus: %w", st.Detail, sandbox.ErrUnsupported)
	}
	return nil
}

// GPUCount is spec's gpus as runtime.CreateOptions.GPUs wants it (checked
// by CheckGPUs or, for a sandbox adopted from its labels, at its creation).
func GPUCount(spec sandbox.Spec) int {
	n, _ := config.ParseGPUs(spec.GPUs)
	return n
}

// Lister is the Docker client listing containers.
type Lister interface {
	List(ctx context.Context, labels map[string]string, all bool) ([]runtime.Container, error)
}

// GPUHolders names the managed sandboxes whose create spec asks for GPUs,
// as "name (gpus)", for `sandtray doctor`.
func GPUHolders(ctx context.Context, d Lister) ([]string, error) {
	list, err := d.List(ctx, map[string]string{sandbox.LabelManaged: "true"}, true)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list {
		var spec sandbox.Spec
		if json.Unmarshal([]byte(c.Labels[sandbox.LabelSpec]), &spec) != nil || spec.GPUs == "" || spec.GPUs == "0" {
			continue
		}
		name := cmp.Or(c.Labels[sandbox.LabelName], c.Name)
		out = append(out, fmt.Sprintf("%s (%s)", name, spec.GPUs))
	}
	slices.Sort(out)
	return out, nil
}

// MinToolkit is the first NVIDIA Container Toolkit whose hooks do not load
// what a container's LD_PRELOAD names, as root on the host (CVE-2025-23266).
const MinToolkit = "1.17.8"

// Toolkit is the NVIDIA Container Toolkit found on this host, for
// `sandtray doctor`.
type Toolkit struct {
	Path    string // the program whose version was asked; "" when none was found
	Version string // "1.17.8"; "" when its answer named no version
	Output  string // its answer, first line, when it named none
	TooOld  bool   // Version is older than MinToolkit
}

// toolkitPrograms are the toolkit's programs, the hooks first: a host may
// hold an older hook beside a newer CLI, and the oldest one found counts.
var toolkitPrograms = []string{"nvidia-container-runtime-hook", "nvidia-ctk", "nvidia-container-toolkit",
	"nvidia-container-runtime", "nvidia-container-cli"}

// toolkitDirs are looked in besides PATH: a tray app started from a
// desktop session may have a short PATH.
var toolkitDirs = []string{"/usr/bin", "/usr/local/bin", "/usr/sbin"}

// FindToolkit asks each of the toolkit's programs on this host its version
// and returns the oldest, or the first whose answer named none.
func FindToolkit(ctx context.Context) Toolkit {
	return findToolkit(ctx, lookTool, func(ctx context.Context, path string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
		return string(out), err
	})
}

// lookTool finds name on PATH, then in toolkitDirs.
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range toolkitDirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func findToolkit(ctx context.Context, look func(string) (string, error), run func(context.Context, string) (string, error)) Toolkit {
	var found Toolkit
	seen := map[string]bool{}
	for _, name := range toolkitPrograms {
		path, err := look(name)
		if err != nil || seen[path] {
			continue
		}
		seen[path] = true
		out, _ := run(ctx, path)
		v := ParseToolkitVersion(out)
		switch {
		case v == "":
			first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
			return Toolkit{Path: path, Output: first}
		case found.Path == "" || olderVersion(v, found.Version):
			found = Toolkit{Path: path, Version: v}
		}
	}
	found.TooOld = found.Version != "" && ToolkitTooOld(found.Version)
	return found
}

// toolkitVersion finds the version in a toolkit program's --version answer:
// "NVIDIA Container Toolkit CLI version 1.17.8", "NVIDIA Container Runtime
// Hook version 1.17.7", "cli-version: 1.17.8" (the first line that names
// one: nvidia-container-runtime names runc's after its own).
var toolkitVersion = regexp.MustCompile(`(?i)version:?\s+v?(\d+\.\d+\.\d+)`)

// ParseToolkitVersion returns the toolkit version in out, or "".
func ParseToolkitVersion(out string) string {
	m := toolkitVersion.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// ToolkitTooOld reports whether version is older than MinToolkit.
func ToolkitTooOld(version string) bool { return olderVersion(version, MinToolkit) }

// olderVersion compares two "x.y.z" versions.
func olderVersion(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
