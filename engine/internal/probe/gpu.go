package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// GPUAsker is the Docker client asked about GPUs.
type GPUAsker interface {
	GPUSupport(context.Context) (docker.GPUSupport, error)
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

// GPUCount is spec's gpus as docker.CreateOptions.GPUs wants it (checked
// by CheckGPUs or, for a sandbox adopted from its labels, at its creation).
func GPUCount(spec sandbox.Spec) int {
	n, _ := config.ParseGPUs(spec.GPUs)
	return n
}

// Lister is the Docker client listing containers.
type Lister interface {
	List(ctx context.Context, labels map[string]string, all bool) ([]docker.Container, error)
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
