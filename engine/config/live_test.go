package config

import "testing"

// TestAppliesLive names what waits for a restart.
func TestAppliesLive(t *testing.T) {
	for key, want := range map[string]bool{
		"limits.memory_mb": true, "default_image": true, "host.allowed_roots": true, "pool.size": true,
		"sandbox.network": true, "egress.allow": true,
		"http.listen": false, "state_dir": false, "docker.host": false, "limits.output_bytes": false,
		"limits.max_request_bytes": false, "ports.forbidden": false,
	} {
		if got := AppliesLive(key); got != want {
			t.Errorf("AppliesLive(%q) = %v, want %v", key, got, want)
		}
	}
}
