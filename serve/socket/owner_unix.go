//go:build unix

package socket

import (
	"io/fs"
	"syscall"
)

// ownerOf returns the uid that owns the file described by fi.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}
