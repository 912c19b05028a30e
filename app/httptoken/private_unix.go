//go:build unix

package httptoken

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkPrivate refuses a token file that anyone but its owner can read or
// write, or whose owner is not this user.
func checkPrivate(path string, info fs.FileInfo) error {
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("HTTP token file %s has mode %04o, so other users can read it; "+
			"run `sandtray token --rotate` to replace it with a private one", path, perm)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("HTTP token file %s belongs to uid %d, not to you; remove it and run `sandtray token`", path, st.Uid)
	}
	return nil
}

func stampOf(info fs.FileInfo) stamp {
	s := stamp{size: info.Size(), mtime: info.ModTime(), mode: info.Mode(), uid: -1}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		s.ino, s.uid = uint64(st.Ino), int(st.Uid)
	}
	return s
}
