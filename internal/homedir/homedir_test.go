package homedir

import (
	"path/filepath"
	"testing"
)

func TestExpand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for in, want := range map[string]string{
		"~/notes/a.txt": filepath.Join(home, "notes/a.txt"),
		"~":             "~", // only "~/" is expanded
		"/etc/hosts":    "/etc/hosts",
		"rel/~/x":       "rel/~/x",
	} {
		if got := Expand(in); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}
