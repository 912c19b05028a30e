//go:build unix

package shim

import "syscall"

// exeSuffix is the executables' file-name suffix.
const exeSuffix = ""

// detachedAttr starts the engine in a new session: no controlling terminal,
// and not in the shim's process group.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// detachedDir is the started engine's working directory: the root, so it
// holds no mount busy.
func detachedDir(string) string { return "/" }
