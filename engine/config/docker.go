package config

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker is the [docker] section: which Docker engine to use. [runtime]
// host says the same for any runtime; this key is still read (RuntimeHost).
type Docker struct {
	// Host pins the engine, e.g. "unix:///Users/me/.colima/default/docker.sock"
	// or "ssh://me@build-box". Empty: DOCKER_HOST, the current docker
	// context, then the known sockets, the first that answers.
	Host string `toml:"host"`
}

// dockerSchemes are the addresses docker.host accepts, as DOCKER_HOST does.
var dockerSchemes = []string{"unix", "npipe", "tcp", "ssh", "http", "https"}

// check validates the [docker] section, naming the key.
func (d Docker) check() error { return checkDockerHost("docker.host", d.Host) }

// checkDockerHost validates a Docker address set at key.
func checkDockerHost(key, host string) error {
	if host == "" {
		return nil
	}
	u, err := url.Parse(host)
	if err != nil || !slices.Contains(dockerSchemes, u.Scheme) {
		return fmt.Errorf("%s %q must be an address like unix:///path/docker.sock, npipe:////./pipe/docker_engine, "+
			"tcp://host:2376 or ssh://user@host (or empty to find Docker by itself): %w", key, host, sandbox.ErrInvalid)
	}
	return nil
}
