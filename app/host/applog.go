//go:build cgo

package host

import (
	"io"
	"os"
	"path/filepath"
)

// AppLogName is the app's log in the state folder: what this run of the
// window logged (it starts empty each run), for Help → Open log…
const AppLogName = "app.log"

// teeLog makes the app's log go to AppLogName as well as to opts.Stderr (a
// terminal, or nowhere when started from a menu), and returns its path; ""
// when it cannot be written, and the log stays on stderr.
func teeLog(opts *Options) (path string, closeLog func()) {
	path = filepath.Join(cmpOr(opts.StateDir, StateDir()), AppLogName)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", func() {}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", func() {}
	}
	opts.Stderr = io.MultiWriter(opts.Stderr, f)
	return path, func() { f.Close() }
}
