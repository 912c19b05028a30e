package config

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker is the [docker] section: which Docker engine to use.
type Docker struct {
	// Host pins the engine, e.g. "unix:///Users/me/.colima/default/docker.sock"
	// or "ssh://me@build-box". Empty: DOCKER_HOST, the current docker
	// context, then the known sockets, the first that answers.
	Host string `toml:"host"`
}

// dockerSchemes are the addresses docker.host accepts, as DOCKER_HOST does.
var dockerSchemes = []string{"unix", "npipe", "tcp", "ssh", "http", "https"}

// check validates the [docker] section, naming the key.
func (d Docker) check() error {
	if d.Host == "" {
		return nil
	}
	u, err := url.Parse(d.Host)
	if err != nil || !slices.Contains(dockerSchemes, u.Scheme) {
		return fmt.Errorf("docker.host %q must be an address like unix:///path/docker.sock, npipe:////./pipe/docker_engine, "+
			"tcp://host:2376 or ssh://user@host (or empty to find Docker by itself): %w", d.Host, sandbox.ErrInvalid)
	}
	return nil
}
