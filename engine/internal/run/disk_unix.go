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
