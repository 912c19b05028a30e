package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestDockerHostKey(t *testing.T) {
	for host, ok := range map[string]bool{
		"": true,
		"unix:///Users/me/.colima/default/docker.sock": true,
		"npipe:////./pipe/docker_engine":               true,
		"ssh://me@build-box:2222":                      true,
		"tcp://10.0.0.5:2376":                          true,
		"/var/run/docker.sock":                         false, // a path, not an address
		"colima":                                       false,
		"ftp://host":                                   false,
	} {
		cfg := Default()
		cfg.Docker.Host = host
		err := cfg.Validate()
		if ok && err != nil {
			t.Errorf("docker.host %q: %v", host, err)
		}
		if !ok && (!errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "docker.host")) {
			t.Errorf("docker.host %q: err = %v, want ErrInvalid naming docker.host", host, err)
		}
	}
}
