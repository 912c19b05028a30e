package sandtray

import (
	"regexp"
	"testing"
)

func TestVersionComesFromFyneApp(t *testing.T) {
	if !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(Version) {
		t.Errorf("Version = %q, want FyneApp.toml's semantic version", Version)
	}
	if got := readVersion([]byte("[Details]\nVersion = \"9.8.7\"\n")); got != "9.8.7" {
		t.Errorf("readVersion = %q", got)
	}
	if got := readVersion([]byte("not toml [")); got != "dev" {
		t.Errorf("readVersion of a broken file = %q, want dev", got)
	}
}
