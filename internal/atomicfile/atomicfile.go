// Package atomicfile replaces a file so that a crash or a concurrent reader
// sees the old file or the new one, never part of one: the data goes to a
// temporary file in the same directory, which is then renamed over the path.
// Client configs, the settings file and the autostart entry are written so.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, with mode, creating its directory (0700)
// when missing.
func Write(path string, data []byte, mode fs.FileMode) error {
	_, err := WriteIf(path, data, mode, nil)
	return err
}

// WriteIf is Write that first asks check, when not nil, about the written
// temporary file (e.g. does it parse): path is replaced only when check
// says yes. It reports whether path was replaced.
func WriteIf(path string, data []byte, mode fs.FileMode, check func(tmp string) bool) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	name := tmp.Name()
	defer os.Remove(name) // a no-op after the rename
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if check != nil && !check(name) {
		return false, nil
	}
	return true, os.Rename(name, path)
}
