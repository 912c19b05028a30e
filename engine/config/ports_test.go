package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPortsAndGPUConfig(t *testing.T) {
	dir := t.TempDir()
	load := func(text string) (Config, error) {
		p := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return Load(p)
	}
	cfg, err := load("[ports]\nforbidden = [22, 5432]\nmax_per_sandbox = 3\n[gpu]\nallow = false\ndefault = \"1\"\nmax = 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if p, g := cfg.Ports, cfg.GPU; len(p.Forbidden) != 2 || p.MaxPerSandbox != 3 || p.MaxConnections != 64 || p.HostRange != "49152-65535" || g.Allow || g.Default != "1" || g.Max != 2 {
		t.Errorf("loaded ports %+v, gpu %+v", p, g)
	}
	for _, b := range []struct{ text, key string }{
		{"[ports]\nforbidden = [0]\n", "ports.forbidden[0]"},
		{"[ports]\nforbidden = [22, 70000]\n", "ports.forbidden[1]"},
		{"[ports]\nmax_per_sandbox = -1\n", "ports.max_per_sandbox"},
		{"[ports]\nmax_connections = 0\n", "ports.max_connections"},
		{"[ports]\nhost_range = \"8080\"\n", "ports.host_range"},
		{"[ports]\nhost_range = \"80-9000\"\n", "ports.host_range"},
		{"[ports]\nhost_range = \"60000-50000\"\n", "ports.host_range"},
		{"[ports]\nhost_range = \"50000-70000\"\n", "ports.host_range"},
		{"[ports]\nhost_range = \"a-b\"\n", "ports.host_range"},
		{"[gpu]\ndefault = \"some\"\n", "gpu.default"},
		{"[gpu]\nmax = -2\n", "gpu.max"},
	} {
		if _, err := load(b.text); err == nil || !strings.Contains(err.Error(), b.key) {
			t.Errorf("config %q: error %v, want one naming %s", b.text, err, b.key)
		}
	}
}

// TestPortsHostRange (F39): ports.host_range reads as two numbers, and a
// narrower one loads.
func TestPortsHostRange(t *testing.T) {
	if lo, hi := (Ports{HostRange: defaultHostRange}).HostPorts(); lo != 49152 || hi != 65535 {
		t.Errorf("default range = %d-%d", lo, hi)
	}
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte("[ports]\nhost_range = \"40000 - 40009\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := cfg.Ports.HostPorts(); lo != 40000 || hi != 40009 {
		t.Errorf("loaded range = %d-%d, want 40000-40009", lo, hi)
	}
}
