package docker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// cdiGPUKind is the CDI kind the NVIDIA Container Toolkit generates.
const cdiGPUKind = "nvidia.com/gpu"

// GPUSupport looks at `docker info`: an "nvidia" runtime, CDI devices the
// daemon discovered (API 1.50+), and, when the daemon runs on this host, the
// NVIDIA hook Docker's device driver needs and the CDI specs in the daemon's
// CDI spec dirs.
func (c *Client) GPUSupport(ctx context.Context) (runtime.GPUSupport, error) {
	res, err := c.api.Info(ctx, client.InfoOptions{})
	if err != nil {
		return runtime.GPUSupport{}, wrap("get Docker info", err)
	}
	info := res.Info
	if _, ok := info.Runtimes["nvidia"]; ok {
		return runtime.GPUSupport{Method: runtime.GPUNvidia, Detail: "the Docker daemon has the nvidia runtime (NVIDIA Container Toolkit)"}, nil
	}
	for _, d := range info.DiscoveredDevices {
		if d.Source == "cdi" && strings.HasPrefix(d.ID, cdiGPUKind+"=") {
			return runtime.GPUSupport{Method: runtime.GPUCDI, Detail: "the Docker daemon has CDI GPU devices (" + d.ID + ", ...)"}, nil
		}
	}
	local := strings.HasPrefix(c.Host(), "unix://")
	if local {
		if path, err := exec.LookPath("nvidia-container-runtime-hook"); err == nil {
			return runtime.GPUSupport{Method: runtime.GPUNvidia, Detail: "the NVIDIA Container Toolkit is installed (" + path + ")"}, nil
		}
		if spec := findCDISpec(info.CDISpecDirs); spec != "" {
			return runtime.GPUSupport{Method: runtime.GPUCDI, Detail: "CDI is enabled and " + spec + " names NVIDIA GPUs"}, nil
		}
	}
	return runtime.GPUSupport{Detail: noGPUDetail(c.Host(), len(info.CDISpecDirs) > 0)}, nil
}

// noGPUDetail says that this Docker host has no GPU runtime and what to install.
func noGPUDetail(host string, cdi bool) string {
	found := "no nvidia runtime and no NVIDIA CDI devices"
	if !cdi {
		found = "no nvidia runtime, and CDI is not enabled"
	}
	return fmt.Sprintf("the Docker host (%s) has no GPU runtime: `docker info` shows %s. "+
		"To give sandboxes GPUs, install the NVIDIA driver and the NVIDIA Container Toolkit on that host, "+
		"run `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker", host, found)
}

// findCDISpec returns a CDI spec file in dirs that declares NVIDIA GPUs, or "".
func findCDISpec(dirs []string) string {
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), cdiGPUKind) {
				return path
			}
		}
	}
	return ""
}

// deviceRequests maps a GPU request to Docker's: count -1 is every GPU,
// n > 0 that many (the first n for CDI), 0 none.
func deviceRequests(count int, method string) []container.DeviceRequest {
	if count == 0 {
		return nil
	}
	if method == runtime.GPUCDI {
		ids := []string{cdiGPUKind + "=all"}
		if count > 0 {
			ids = ids[:0]
			for i := range count {
				ids = append(ids, cdiGPUKind+"="+strconv.Itoa(i))
			}
		}
		return []container.DeviceRequest{{Driver: "cdi", DeviceIDs: ids}}
	}
	return []container.DeviceRequest{{Driver: "nvidia", Count: count, Capabilities: [][]string{{"gpu"}}}}
}

// noGPUs is the env entry that tells the NVIDIA Container Toolkit a
// container gets no GPU: under NVIDIA's runtime as the daemon's default,
// "void" makes it act as runc does (no device, no hook), where an image's
// own NVIDIA_VISIBLE_DEVICES (CUDA images set "all") would hand the
// container every GPU whatever Sandtray's gpu.allow says (docs/security.md F35).
const noGPUs = "NVIDIA_VISIBLE_DEVICES=void"

// gpuEnv is o's env as the container gets it: a container without GPUs
// ends with noGPUs, in place of any NVIDIA_VISIBLE_DEVICES it had (the
// engine refuses the name from callers; this keeps it from any other
// source). A container's env overrides its image's.
func gpuEnv(o runtime.CreateOptions) []string {
	if o.GPUs != 0 {
		return o.Env
	}
	env := make([]string, 0, len(o.Env)+1)
	for _, kv := range o.Env {
		if !strings.HasPrefix(kv, "NVIDIA_VISIBLE_DEVICES=") {
			env = append(env, kv)
		}
	}
	return append(env, noGPUs)
}

// resolveGPUs picks how to request o's GPUs when the caller did not say,
// and refuses them with sandbox.ErrUnsupported on a daemon without a GPU
// runtime.
func (c *Client) resolveGPUs(ctx context.Context, o *runtime.CreateOptions) error {
	if o.GPUs == 0 || o.GPUMethod != "" {
		return nil
	}
	gpu, err := c.GPUSupport(ctx)
	if err != nil {
		return err
	}
	if gpu.Method == "" {
		return fmt.Errorf("create a container with GPUs: %s: %w", gpu.Detail, sandbox.ErrUnsupported)
	}
	o.GPUMethod = gpu.Method
	return nil
}
