// Package sandtray holds what the whole module shares from its root: the
// release version, read from FyneApp.toml so that file (which `fyne
// package` also reads) is the one place a release changes it.
package sandtray

import (
	_ "embed"
	"runtime/debug"

	"github.com/BurntSushi/toml"
)

//go:embed FyneApp.toml
var fyneApp []byte

// Version is the release version from FyneApp.toml's [Details] Version.
var Version = readVersion(fyneApp)

func readVersion(data []byte) string {
	var meta struct {
		Details struct{ Version string }
	}
	if _, err := toml.Decode(string(data), &meta); err != nil || meta.Details.Version == "" {
		return "dev"
	}
	return meta.Details.Version
}

// Commit is the git commit the binary was built from, shortened, with
// "-dirty" when the tree had changes; "" when the build did not record it
// (go build -buildvcs=false, or a source tree without .git).
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
