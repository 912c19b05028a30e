package socket

import (
	"fmt"
	"os/user"
)

// defaultPath is the user's named pipe, \\.\pipe\sandtray-<user>.
func defaultPath() (string, error) {
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("socket: who is the current user: %w", err)
	}
	return pipeName(u.Username), nil
}

// endpointDir is "": a named pipe has no directory; its security
// descriptor is its protection.
func endpointDir(string) string { return "" }
