package shim

import (
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// exeSuffix is the executables' file-name suffix.
const exeSuffix = ".exe"

// detachedAttr starts the engine in a new process group (a Ctrl+C or
// Ctrl+Break the client sends the shim's console group does not reach it)
// and without a console of its own: Windows' counterpart of a new session.
func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS,
		HideWindow:    true,
	}
}

// detachedDir is the started engine's working directory: the root of the
// engine's own drive, so it holds no folder of the client's busy.
func detachedDir(exe string) string { return filepath.VolumeName(exe) + `\` }
