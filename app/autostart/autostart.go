// Package autostart starts Sandtray when the user logs in: an XDG autostart
// entry on Linux and other Unix desktops, a LaunchAgent on macOS, the
// per-user Run key on Windows. The tray menu's "Start at login" item and
// `sandtray autostart enable|disable|status` both use it, so they agree.
//
// What each OS gets written is produced by code that builds everywhere and is
// tested on Linux; only the choice of place (and, on Windows, the registry
// handle) sits behind build constraints.
package autostart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Status says whether Sandtray starts at login, and how.
type Status struct {
	Enabled bool
	Where   string // the entry: a file, or the registry value
	Command string // the program the entry starts; "" when disabled
}

// String is the sentence `sandtray autostart status` prints.
func (s Status) String() string {
	if !s.Enabled {
		return "Sandtray does not start at login (" + s.Where + " is absent)."
	}
	msg := fmt.Sprintf("Sandtray starts at login: %s runs %s.", s.Where, s.Command)
	if _, err := os.Stat(s.Command); err != nil {
		msg += " That program is missing: run `sandtray autostart enable` from the one you use."
	}
	return msg
}

// store is one OS's way to remember a login item.
type store interface {
	where() string
	isAbs(path string) bool // on the OS the entry is for
	write(exe string) error
	remove() error // no error when there is nothing to remove
	read() (exe string, enabled bool, err error)
}

// Autostart turns starting at login on and off. Create it with New.
type Autostart struct{ s store }

// New returns the Autostart of this OS for the current user.
func New() (*Autostart, error) {
	s, err := defaultStore()
	if err != nil {
		return nil, fmt.Errorf("autostart: %w", err)
	}
	return &Autostart{s: s}, nil
}

// Enable makes the login session start exe, an absolute path. Running it
// again replaces the entry, so it also repairs one pointing at an old path.
func (a *Autostart) Enable(exe string) (Status, error) {
	if !a.s.isAbs(exe) {
		return Status{}, fmt.Errorf("autostart: %q is not an absolute path", exe)
	}
	if err := a.s.write(exe); err != nil {
		return Status{}, fmt.Errorf("autostart: write %s: %w", a.s.where(), err)
	}
	return a.Status()
}

// Disable removes the entry; it is not an error when there is none.
func (a *Autostart) Disable() (Status, error) {
	if err := a.s.remove(); err != nil {
		return Status{}, fmt.Errorf("autostart: remove %s: %w", a.s.where(), err)
	}
	return a.Status()
}

// Status reads the entry as the OS will see it at the next login.
func (a *Autostart) Status() (Status, error) {
	exe, enabled, err := a.s.read()
	if errors.Is(err, os.ErrNotExist) {
		return Status{Where: a.s.where()}, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("autostart: read %s: %w", a.s.where(), err)
	}
	st := Status{Enabled: enabled, Where: a.s.where()}
	if enabled {
		st.Command = exe
	}
	return st, nil
}

// Executable is the program to start at login: this one, as an absolute
// path. Symlinks are kept, so an entry naming ~/.local/bin/sandtray follows
// the link to whatever version it points at after an upgrade.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("autostart: find this program: %w", err)
	}
	return filepath.Abs(exe)
}
