package hostfs

import (
	"errors"
	"io/fs"
	"os"
)

// renameExclusive renames src to dst without replacing anything that was at
// dst: a file is hard-linked to its new name (which fails if the name
// exists) and then unlinked; a folder is moved by renameDir, which never
// replaces an existing name either.
func renameExclusive(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		if err := os.Link(src, dst); err != nil {
			return err
		}
		return os.Remove(src)
	}
	return renameDir(src, dst)
}

// isExist reports whether err says the destination already exists.
func isExist(err error) bool { return errors.Is(err, fs.ErrExist) }
