// Package install adds Sandtray to an MCP client's configuration (the
// "sandtray" server entry pointing at the absolute path of sandtray-mcp),
// removes it again, and reports which clients have it: `sandtray install`
// and the tray app's Clients view share this code.
//
// It changes nothing else in the file: other servers and unrelated keys keep
// their values and order. It writes a backup of the original next to it,
// replaces the file atomically, and does nothing when the entry is already
// right, so running it twice is harmless.
package install

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ServerName is the key of Sandtray's entry in a client's server map.
const ServerName = "sandtray"

// ErrUnknownClient is returned (wrapped) by Install for a client name it
// does not know; the message lists the valid ones.
var ErrUnknownClient = errors.New("unknown client")

// Options configures Install.
type Options struct {
	// Home is the user's home directory; empty means os.UserHomeDir(). When
	// set, XDG_CONFIG_HOME is ignored, so tests see fixed paths.
	Home string
	// ShimPath is the absolute path of sandtray-mcp; empty means
	// DefaultShimPath().
	ShimPath string
	// Print returns the snippet and the file it belongs in, writing nothing.
	Print bool
	// GOOS selects the OS whose paths to use; empty means runtime.GOOS.
	GOOS string
	// HTTP, when set, writes the URL-and-header entry for Sandtray's HTTP
	// endpoint instead of the shim's command (see http.go).
	HTTP *HTTPTarget

	systemHome bool // Home came from os.UserHomeDir, so XDG_CONFIG_HOME applies
}

// Status says what Install did.
type Status int

// What Install did with the config file.
const (
	Printed   Status = iota // nothing written: Options.Print
	Created                 // a new config file holding only the entry
	Added                   // the entry was added to an existing file
	Updated                 // an existing sandtray entry was changed
	Unchanged               // the entry was already right; nothing written
	Removed                 // Uninstall removed the entry
	Absent                  // Uninstall found no entry; nothing written
)

// Result describes the outcome of Install.
type Result struct {
	Client  string // the client's name, as passed to Install
	App     string // the client's display name, e.g. "Claude Desktop"
	Path    string // the config file
	Backup  string // the backup of the original, when one was written
	Snippet string // the JSON to merge into Path, for Print or by hand
	Status  Status
	// Target is the file written when Path is a symbolic link to another
	// one (a dotfile manager's); it is set only when that file now holds
	// the HTTP token, which String then warns of.
	Target string
}

// String is the sentence to show the user, and the warning when the token
// went through a symbolic link.
func (r Result) String() string {
	if r.Target == "" {
		return r.sentence()
	}
	return r.sentence() + fmt.Sprintf("\nWarning: %s is a symbolic link, so the HTTP bearer token was written into %s, the file it points to. "+
		"If that file is shared or kept in a repository (dotfiles), the token goes with it: keep it private, or run `sandtray token --rotate` "+
		"and install again if it has left this machine.", r.Path, r.Target)
}

func (r Result) sentence() string {
	switch r.Status {
	case Printed:
		return fmt.Sprintf("Add this to %s:\n%s", r.Path, r.Snippet)
	case Removed:
		return fmt.Sprintf("Removed sandtray from %s (backup: %s). Restart %s to unload it.", r.Path, r.Backup, r.App)
	case Absent:
		return fmt.Sprintf("Sandtray is not in %s; nothing changed.", r.Path)
	case Unchanged:
		return fmt.Sprintf("Sandtray is already installed in %s; nothing changed.", r.Path)
	case Updated:
		return fmt.Sprintf("Updated the sandtray entry in %s (backup: %s). Restart %s to load it.",
			r.Path, r.Backup, r.App)
	case Added:
		return fmt.Sprintf("Added sandtray to %s (backup: %s). Restart %s to load it.", r.Path, r.Backup, r.App)
	default:
		return fmt.Sprintf("Created %s with the sandtray entry. Restart %s to load it.", r.Path, r.App)
	}
}

// Install adds or updates the sandtray entry in client's MCP config. The
// clients are those Clients returns. A malformed config is an error naming
// the file and the position of the problem, and the file is left as it was.
func Install(client string, opts Options) (Result, error) {
	c, ok := clientByName(client)
	if !ok {
		return Result{}, fmt.Errorf("%w %q: choose one of %s", ErrUnknownClient, client,
			strings.Join(Clients(), ", "))
	}
	opts, err := withDefaults(opts)
	if err != nil {
		return Result{}, err
	}
	path, err := c.configPath(opts)
	if err != nil {
		return Result{}, err
	}
	entry, stale := c.entry(opts.ShimPath), httpKeys
	if opts.HTTP != nil {
		if entry, err = c.httpEntry(*opts.HTTP); err != nil {
			return Result{}, err
		}
		stale = stdioKeys
	}
	res := Result{Client: c.name, App: c.app, Path: path, Snippet: snippet(c.key, entry)}
	if opts.Print {
		res.Status = Printed
		return res, nil
	}
	return apply(res, c, entry, stale, opts.HTTP != nil)
}

// withHome fills in Home and GOOS.
func withHome(opts Options) (Options, error) {
	if opts.GOOS == "" {
		opts.GOOS = runtime.GOOS
	}
	if opts.Home == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return opts, fmt.Errorf("find the home directory: %w", err)
		}
		opts.Home, opts.systemHome = home, true
	}
	return opts, nil
}

// withDefaults fills in Home, ShimPath and GOOS and checks ShimPath.
func withDefaults(opts Options) (Options, error) {
	opts, err := withHome(opts)
	if err != nil {
		return opts, err
	}
	if opts.ShimPath == "" && opts.HTTP == nil { // an HTTP entry names no command
		p, err := DefaultShimPath()
		if err != nil {
			return opts, err
		}
		opts.ShimPath = p
	}
	if opts.HTTP == nil && !filepath.IsAbs(opts.ShimPath) {
		return opts, fmt.Errorf("sandtray-mcp path %q is not absolute: clients start servers from /", opts.ShimPath)
	}
	return opts, nil
}

// DefaultShimPath finds sandtray-mcp: next to the running executable (after
// resolving symlinks), else in PATH. The result is absolute.
func DefaultShimPath() (string, error) {
	shimName := "sandtray-mcp"
	if runtime.GOOS == "windows" {
		shimName += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			p := filepath.Join(filepath.Dir(real), shimName)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath(shimName)
	if err != nil {
		return "", errors.New("cannot find sandtray-mcp next to sandtray or in PATH; install it first")
	}
	return filepath.Abs(p)
}
