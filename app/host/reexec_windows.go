//go:build windows

package host

import (
	"fmt"
	"os"
	"os/exec"
)

// Reexec starts this program again, with the same arguments, and returns
// once it has started: Windows has no exec, so this process then exits.
func Reexec() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("restart %s: %w", exe, err)
	}
	return cmd.Process.Release()
}
