//go:build !darwin && !windows

package autostart

import "path/filepath"

// defaultStore is the XDG autostart entry.
func defaultStore() (store, error) {
	dir, err := xdgAutostartDir()
	if err != nil {
		return nil, err
	}
	return xdgEntry{path: filepath.Join(dir, "sandtray.desktop")}, nil
}
