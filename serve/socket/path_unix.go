//go:build unix

package socket

import (
	"os"

	"github.com/adrg/xdg"
)

// defaultPath is the socket in the user's runtime dir (see resolve).
func defaultPath() (string, error) {
	return resolve(xdg.RuntimeDir, os.UserCacheDir, os.Getuid())
}
