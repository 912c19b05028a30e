package docker_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/moby/api/types/container"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/test/dockertest"
)

// TestCreateWithGPUs checks the device requests Docker receives for a GPU
// request, on a created container, and that this GPU-less daemon refuses to
// start it.
func TestCreateWithGPUs(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	tests := []struct {
		name   string
		count  int
		method string
		want   []container.DeviceRequest
	}{
		{"every GPU through the nvidia driver", -1, runtime.GPUNvidia,
			[]container.DeviceRequest{{Driver: "nvidia", Count: -1, Capabilities: [][]string{{"gpu"}}}}},
		{"two GPUs through the nvidia driver", 2, runtime.GPUNvidia,
			[]container.DeviceRequest{{Driver: "nvidia", Count: 2, Capabilities: [][]string{{"gpu"}}}}},
		{"every GPU by CDI name", -1, runtime.GPUCDI,
			[]container.DeviceRequest{{Driver: "cdi", DeviceIDs: []string{"nvidia.com/gpu=all"}}}},
		{"two GPUs by CDI name", 2, runtime.GPUCDI,
			[]container.DeviceRequest{{Driver: "cdi", DeviceIDs: []string{"nvidia.com/gpu=0", "nvidia.com/gpu=1"}}}},
		{"no GPUs", 0, runtime.GPUNvidia, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := createOptions(t)
			o.GPUs, o.GPUMethod = tc.count, tc.method
			id, err := c.Create(ctx, o)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			got, err := c.DeviceRequestsOf(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("device requests (-want +got):\n%s", diff)
			}
			if void := slices.Contains(envOf(t, c, id), "NVIDIA_VISIBLE_DEVICES=void"); void != (tc.count == 0) {
				t.Errorf("NVIDIA_VISIBLE_DEVICES=void in the env: %v, want %v", void, tc.count == 0)
			}
			if tc.count == 0 || tc.method != runtime.GPUNvidia {
				return
			}
			if gpu, _ := c.GPUSupport(ctx); gpu.Method != "" {
				return // a host with GPUs starts it
			}
			if err := c.Start(ctx, id); err == nil {
				t.Error("this daemon has no GPU runtime, yet started a container asking for GPUs")
			} else {
				t.Logf("Docker's refusal: %v", err)
			}
		})
	}
}

// envOf is a container's env as Docker holds it.
func envOf(t *testing.T, c *docker.Client, id string) []string {
	t.Helper()
	raw, err := c.InspectRaw(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Config struct{ Env []string } }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Config.Env
}

// TestCreateWithoutGPUsSaysVoid: a container without GPUs has
// NVIDIA_VISIBLE_DEVICES=void, in place of whatever its options said, so
// that an NVIDIA default runtime gives it none, even from an image that
// sets the variable (CUDA images set "all").
func TestCreateWithoutGPUsSaysVoid(t *testing.T) {
	c := dockertest.Client(t)
	o := createOptions(t)
	o.Env = []string{"A=1", "NVIDIA_VISIBLE_DEVICES=all", "B=2"}
	id, err := c.Create(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(t, c, id)
	n := 0
	for _, kv := range env {
		if strings.HasPrefix(kv, "NVIDIA_VISIBLE_DEVICES=") {
			n++
		}
	}
	if n != 1 || !slices.Contains(env, "NVIDIA_VISIBLE_DEVICES=void") || !slices.Contains(env, "A=1") || !slices.Contains(env, "B=2") {
		t.Errorf("env %q; want the caller's A and B and NVIDIA_VISIBLE_DEVICES=void alone", env)
	}
}

func TestGPUSupportWithoutGPURuntime(t *testing.T) {
	c := dockertest.Client(t)
	gpu, err := c.GPUSupport(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if gpu.Method != "" {
		t.Skipf("this Docker host has GPUs (%s)", gpu.Detail)
	}
	for _, want := range []string{"no GPU runtime", "NVIDIA Container Toolkit", "nvidia-ctk runtime configure"} {
		if !strings.Contains(gpu.Detail, want) {
			t.Errorf("Detail %q does not say %q", gpu.Detail, want)
		}
	}
}
