// Package homedir expands the "~/" that paths in Sandtray's config and
// tools may start with. It needs only the standard library.
package homedir

import (
	"os"
	"path/filepath"
	"strings"
)

// Expand turns a leading "~/" into the user's home directory; any other
// path, or one whose home directory is unknown, is returned as it is.
func Expand(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
