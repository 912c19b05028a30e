package docker

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// sshProcAttr starts ssh (Windows' OpenSSH client) in a process group of
// its own, without a console window: a Ctrl+C in the engine's console goes
// to the engine, which closes its connections.
func sshProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP, HideWindow: true}
}
