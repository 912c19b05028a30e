package images

import "testing"

// TestBaseIsTheDockerfilesFrom: the base the builder pulls first is the
// one the Dockerfile builds on.
func TestBaseIsTheDockerfilesFrom(t *testing.T) {
	if got := Base(); got != "python:3.12-slim" {
		t.Errorf("Base() = %q; want the Dockerfile's FROM, python:3.12-slim", got)
	}
}
