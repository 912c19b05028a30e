package capture

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnExportOnly: a folder is Sandtray's own export only while it holds
// exactly the files the last export to it wrote.
func TestOwnExportOnly(t *testing.T) {
	c := &Capture{cfg: Config{ExportRecords: t.TempDir()}}
	dir := filepath.Join(t.TempDir(), "exp")
	os.Mkdir(dir, 0o755)
	write := func(name, text string) { os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644) }
	write("Dockerfile", dockerfileMarker+"\nFROM x\n")
	write(".dockerignore", dockerignore)
	write(archiveName, "tar bytes")
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if c.isOwnExport(root, dir) {
		t.Fatal("a folder no export recorded counts as Sandtray's own (the marker line alone was trusted)")
	}
	if err := c.remember(root, dir); err != nil {
		t.Fatal(err)
	}
	if !c.isOwnExport(root, dir) {
		t.Fatal("the folder the export just wrote is not recognised")
	}
	if other := filepath.Join(filepath.Dir(dir), "other"); c.isOwnExport(root, other) {
		t.Error("the record of one folder vouches for another")
	}
	write("notes.txt", "mine")
	if c.isOwnExport(root, dir) {
		t.Error("a folder with a file of the user's counts as an export")
	}
	os.Remove(filepath.Join(dir, "notes.txt"))
	write(".dockerignore", "user rules\n")
	if c.isOwnExport(root, dir) {
		t.Error("a changed .dockerignore still counts as Sandtray's")
	}
	if (&Capture{}).isOwnExport(root, dir) {
		t.Error("with no records kept, a folder with files counts as an export")
	}
}
