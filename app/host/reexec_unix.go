//go:build !windows

package host

import (
	"fmt"
	"os"
	"syscall"
)

// Reexec starts this program again in this process, with the same
// arguments and environment: the app after Restart now.
func Reexec() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return fmt.Errorf("restart %s: %w", exe, syscall.Exec(exe, os.Args, os.Environ()))
}
