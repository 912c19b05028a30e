//go:build unix

package run

import (
	"io/fs"
	"syscall"
)

// allocated is the space the file described by info takes on disk: its
// allocated blocks, so a sparse file counts for what it holds.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}

// processAlive reports whether a process with this pid exists (another
// user's included).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
