//go:build !unix

package httptoken

import "io/fs"

// checkPrivate has nothing to check where file modes do not describe who may
// read a file (Windows: the config directory's ACL does).
func checkPrivate(string, fs.FileInfo) error { return nil }

func stampOf(info fs.FileInfo) stamp {
	return stamp{size: info.Size(), mtime: info.ModTime(), mode: info.Mode(), uid: -1}
}
