//go:build !linux

package hostfs

// renameNoReplace renames src to dst, never replacing an existing dst.
func renameNoReplace(src, dst string) error { return renameExclusive(src, dst) }
