package sandbox

// PortForward is a TCP port inside a sandbox forwarded to the host's
// loopback: URL, http://127.0.0.1:<HostPort>/, reaches Port in the sandbox.
type PortForward struct {
	Port     int    `json:"port"`
	HostPort int    `json:"host_port"`
	URL      string `json:"url"`
}

// GPUStatus is whether the Docker host can give sandboxes GPUs, and how.
type GPUStatus struct {
	Available bool `json:"available"`
	// Method is how GPUs are requested: "nvidia" (Docker's NVIDIA device
	// driver) or "cdi" (CDI device names); "" when not available.
	Method string `json:"method,omitempty"`
	// Detail says what was found, or what is missing and what to install.
	Detail string `json:"detail"`
}

// GPUsAll is the gpus value that asks for every GPU of the host.
const GPUsAll = "all"
