//go:build unix

package terminal

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenRunsTheEmulator starts a real process: a fake emulator script in
// PATH, found through $TERMINAL, that writes its arguments into a FIFO the
// test reads (the read waits for the script).
func TestOpenRunsTheEmulator(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "args")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + fifo + "\n"
	if err := os.WriteFile(filepath.Join(dir, "fake-term"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("TERMINAL", "fake-term")
	if err := New().Open([]string{"docker", "exec", "-it", "abc", "sh"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if want := "-e\ndocker\nexec\n-it\nabc\nsh\n"; string(got) != want {
		t.Errorf("the emulator got %q, want %q", got, want)
	}
}
