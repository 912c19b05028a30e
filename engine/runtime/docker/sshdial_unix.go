//go:build unix

package docker

import (
	"syscall"
)

// sshProcAttr puts ssh in a process group of its own, so a Ctrl+C in the
// terminal that runs `sandtray serve` reaches the engine (which closes its
// connections) rather than killing ssh under a request.
func sshProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
