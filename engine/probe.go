package engine

import (
	"context"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/internal/probe"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// DockerProbe is what `sandtray doctor` reports of Docker: which engine the
// config and environment lead to, why, and what it is (see
// engine/internal/probe).
type DockerProbe = probe.Report

// DockerTried is an endpoint that did not answer (DockerProbe.Tried).
type DockerTried = runtime.Tried

// GPUToolkit is the NVIDIA Container Toolkit a DockerProbe found on this host.
type GPUToolkit = probe.Toolkit

// MinGPUToolkit is the oldest NVIDIA Container Toolkit `sandtray doctor`
// accepts (CVE-2025-23266 is fixed from it on; docs/security.md F35).
const MinGPUToolkit = probe.MinToolkit

// ProbeDocker finds Docker as the engine would with cfg and asks it what it
// is. It never creates anything.
func ProbeDocker(ctx context.Context, cfg config.Config) DockerProbe { return probe.Docker(ctx, cfg) }

// ProbePool reports the warm pool's spares running now, by image, as
// Docker lists them (`sandtray doctor` runs outside the engine): the spares
// of every running Sandtray of this user's Docker, test engines' excepted.
// Want is left 0: only the engine knows its shares.
func ProbePool(ctx context.Context, cfg config.Config) ([]sandbox.PoolImage, error) {
	return probe.Pool(ctx, cfg)
}

// GPUStatus reports whether the Docker host can give sandboxes NVIDIA GPUs,
// and how, or what to install. It asks Docker each time.
func (e *Engine) GPUStatus(ctx context.Context) sandbox.GPUStatus { return probe.GPUs(ctx, e.docker) }

// gpuCount is spec's gpus as runtime.CreateOptions.GPUs wants it (see
// probe.GPUCount).
func gpuCount(spec sandbox.Spec) int { return probe.GPUCount(spec) }
