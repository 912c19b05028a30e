//go:build unix

package hostfs

import (
	"os"
	"syscall"
)

// renameDir reserves dst with a Mkdir (which fails if the name exists) and
// renames the folder src over that empty folder of its own. (os.Rename
// refuses any existing folder as a destination, so rename(2) is called.)
func renameDir(src, dst string) error {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	if err := syscall.Rename(src, dst); err != nil {
		os.Remove(dst)
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	return nil
}
