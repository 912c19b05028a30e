//go:build windows

package hostfs

import "os"

// renameDir renames the folder src to dst; Windows never moves a folder
// over an existing name.
func renameDir(src, dst string) error { return os.Rename(src, dst) }
