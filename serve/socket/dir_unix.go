//go:build unix

package socket

import "path/filepath"

// endpointDir is the directory that must be private for the endpoint at path.
func endpointDir(path string) string { return filepath.Dir(path) }
