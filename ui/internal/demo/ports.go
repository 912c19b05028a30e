package main

import (
	"context"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// withPorts gives the first sandbox a forwarded web server and the second
// GPUs, so the Details tab shows its Ports and GPUs rows.
func withPorts(f *fakeBackend) *fakeBackend {
	if len(f.boxes) < 2 {
		return f
	}
	f.boxes[0].Ports = []sandbox.PortForward{
		{Port: 8000, HostPort: 41234, URL: "http://127.0.0.1:41234/"},
		{Port: 8888, HostPort: 8888, URL: "http://127.0.0.1:8888/"},
	}
	f.boxes[1].Spec.GPUs = sandbox.GPUsAll
	if len(f.boxes) > 2 {
		f.boxes[2].Ports = []sandbox.PortForward{{Port: 3000, HostPort: 43117, URL: "http://127.0.0.1:43117/"}}
	}
	return f
}

// GPUStatus answers as a GPU-less Docker host does.
func (f *fakeBackend) GPUStatus(context.Context) sandbox.GPUStatus {
	return sandbox.GPUStatus{Detail: "the Docker host (unix:///var/run/docker.sock) has no GPU runtime: `docker info` shows no nvidia runtime, and CDI is not enabled. " +
		"To give sandboxes GPUs, install the NVIDIA driver and the NVIDIA Container Toolkit on that host, run `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker"}
}
