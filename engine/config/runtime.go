package config

import (
	"fmt"
	"regexp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// DefaultRuntime is the container runtime an empty [runtime] name chooses.
const DefaultRuntime = "docker"

// Runtime is the [runtime] section: which container runtime runs the
// sandboxes, and where it is.
type Runtime struct {
	// Name is the runtime, as its package registers it (engine/runtime):
	// "docker" (Docker, and Podman through its Docker API) unless a program
	// links in another. Empty means DefaultRuntime.
	Name string `toml:"name"`
	// Host is where the runtime is, in its own terms; for "docker" an
	// address as docker.host takes. Empty: [docker] host, which older files
	// set, then the runtime finds itself (for Docker: DOCKER_HOST, the
	// current docker context, the known sockets).
	Host string `toml:"host"`
}

var runtimeName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// RuntimeName is the runtime the configuration chooses.
func (c Config) RuntimeName() string {
	if c.Runtime.Name == "" {
		return DefaultRuntime
	}
	return c.Runtime.Name
}

// RuntimeHost is where the configuration puts the runtime: [runtime] host,
// else [docker] host (files written before [runtime] existed), else "" (the
// runtime finds itself).
func (c Config) RuntimeHost() string {
	if c.Runtime.Host != "" {
		return c.Runtime.Host
	}
	return c.Docker.Host
}

// check validates the [runtime] section with the [docker] one, naming the key.
func (r Runtime) check(d Docker) error {
	if r.Name != "" && !runtimeName.MatchString(r.Name) {
		return fmt.Errorf("runtime.name %q must be a runtime's name such as \"docker\" (lower-case letters, digits, - and _): %w",
			r.Name, sandbox.ErrInvalid)
	}
	if r.Host != "" && d.Host != "" && r.Host != d.Host {
		return fmt.Errorf("runtime.host %q and docker.host %q disagree: keep runtime.host and remove docker.host: %w",
			r.Host, d.Host, sandbox.ErrInvalid)
	}
	if r.Name == "" || r.Name == DefaultRuntime {
		if err := checkDockerHost("runtime.host", r.Host); err != nil {
			return err
		}
	}
	return nil
}
