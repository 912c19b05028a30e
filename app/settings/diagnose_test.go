package settings

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDiagnose: a file the engine refuses is explained as a person fixes
// it: the line at fault, and for a key the engine does not know, the one
// most likely meant; a file it takes has no problem.
func TestDiagnose(t *testing.T) {
	tests := []struct {
		name, file  string
		line        int
		key, assume string
	}{
		{"unknown key", "# my limits\n[limits]\ncpus = 1\nmemory = 512\n", 4, "limits.memory", "limits.memory_mb"},
		{"unknown key, far from any", "[sandbox]\nwobble = true\n", 2, "sandbox.wobble", ""},
		{"bad value", "default_image = \"python:3.12\"\n[limits]\nmemory_mb = 8\n", 3, "", ""},
		{"syntax", "[limits]\nmemory_mb = = 512\n", 2, "", ""},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(path, []byte(tt.file), 0o600)
		p, bad := Diagnose(path)
		if !bad || p.Err == nil || p.Line != tt.line || p.Key != tt.key || p.Suggest != tt.assume || p.Text != tt.file {
			t.Errorf("%s: %+v (bad %t); want line %d, key %q, suggestion %q", tt.name, p, bad, tt.line, tt.key, tt.assume)
		}
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if _, bad := Diagnose(path); bad {
		t.Error("a missing file (the defaults) has a problem")
	}
	os.WriteFile(path, []byte("[limits]\nmemory_mb = 512\n"), 0o600)
	if p, bad := Diagnose(path); bad {
		t.Errorf("a good file: %+v", p)
	}
}

func TestSuggest(t *testing.T) {
	for key, want := range map[string]string{
		"limits.memory": "limits.memory_mb", "limit.memory_mb": "limits.memory_mb", "sandbox.allow_net": "sandbox.allow_network",
		"sandbox.wobble": "", "defualt_image": "default_image", "egress.alow": "egress.allow", "zzz": "",
	} {
		if got := Suggest(key); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
}
