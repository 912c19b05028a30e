package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func load(t *testing.T, body string) (Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path)
}

// TestRuntimeSection: [runtime] name and host choose the runtime; a file
// written before [runtime] existed, with [docker] host, still pins Docker;
// no file means Docker, found by itself.
func TestRuntimeSection(t *testing.T) {
	for _, tc := range []struct {
		name, body     string
		wantName, host string
	}{
		{"no file", "", "docker", ""},
		{"old [docker] host", "[docker]\nhost = \"ssh://me@box\"\n", "docker", "ssh://me@box"},
		{"[runtime]", "[runtime]\nname = \"docker\"\nhost = \"unix:///run/podman/podman.sock\"\n", "docker", "unix:///run/podman/podman.sock"},
		{"another runtime", "[runtime]\nname = \"kubernetes\"\nhost = \"my-cluster-context\"\n", "kubernetes", "my-cluster-context"},
		{"both, the same", "[runtime]\nhost = \"tcp://h:2376\"\n[docker]\nhost = \"tcp://h:2376\"\n", "docker", "tcp://h:2376"},
	} {
		cfg, err := load(t, tc.body)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if cfg.RuntimeName() != tc.wantName || cfg.RuntimeHost() != tc.host {
			t.Errorf("%s: runtime %q at %q, want %q at %q", tc.name, cfg.RuntimeName(), cfg.RuntimeHost(), tc.wantName, tc.host)
		}
	}
	for _, tc := range []struct{ name, body, key string }{
		{"a name that is no name", "[runtime]\nname = \"Docker Desktop\"\n", "runtime.name"},
		{"a docker host that is a path", "[runtime]\nhost = \"/var/run/docker.sock\"\n", "runtime.host"},
		{"two hosts", "[runtime]\nhost = \"tcp://a:2376\"\n[docker]\nhost = \"tcp://b:2376\"\n", "docker.host"},
		{"a key of neither", "[runtime]\nkind = \"docker\"\n", "runtime.kind"},
	} {
		_, err := load(t, tc.body)
		if tc.key != "runtime.kind" && !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("%s: %v, want sandbox.ErrInvalid", tc.name, err)
		}
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.key)
		}
	}
}
