package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeWithMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "config.json")
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(got) != "two" || fi.Mode().Perm() != 0o644 {
		t.Errorf("file holds %q with mode %v, want \"two\" with 0644", got, fi.Mode().Perm())
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("created directory has mode %v, want 0700", dir.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteIfKeepsTheFileWhenCheckSaysNo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte("old"), 0o600)
	var seen string
	ok, err := WriteIf(path, []byte("bad"), 0o600, func(tmp string) bool {
		b, _ := os.ReadFile(tmp)
		seen = string(b)
		return false
	})
	got, _ := os.ReadFile(path)
	if ok || err != nil || string(got) != "old" || seen != "bad" {
		t.Errorf("WriteIf = %v, %v; file %q, check saw %q; want false, nil, \"old\", \"bad\"", ok, err, got, seen)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
