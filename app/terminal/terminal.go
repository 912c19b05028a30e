// Package terminal opens the user's terminal emulator running a command:
// $TERMINAL, x-terminal-emulator or a common emulator on Linux, Terminal.app
// on macOS, Windows Terminal or cmd on Windows. The tray app's Terminal
// button uses it to open a shell in a sandbox.
package terminal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// ErrNotFound is returned (wrapped) when no terminal emulator is found.
var ErrNotFound = errors.New("no terminal emulator found")

// emulator is one terminal program and how it takes a command to run.
type emulator struct {
	name string
	args func(argv []string) []string // the emulator's arguments for argv
}

// dashE runs argv after -e, each argument separate (xterm, konsole,
// x-terminal-emulator, alacritty…).
func dashE(argv []string) []string { return append([]string{"-e"}, argv...) }

// linuxEmulators is the search order on Linux and other Unix desktops,
// after $TERMINAL: Debian's alternative first, then desktops' defaults.
var linuxEmulators = []emulator{
	{"x-terminal-emulator", dashE},
	{"gnome-terminal", func(argv []string) []string { return append([]string{"--"}, argv...) }},
	{"konsole", dashE},
	{"xfce4-terminal", func(argv []string) []string { return append([]string{"-x"}, argv...) }},
	{"mate-terminal", func(argv []string) []string { return append([]string{"-x"}, argv...) }},
	{"tilix", func(argv []string) []string { return append([]string{"-e"}, shellJoin(argv)) }},
	{"kitty", func(argv []string) []string { return argv }},
	{"alacritty", dashE},
	{"wezterm", func(argv []string) []string { return append([]string{"start", "--"}, argv...) }},
	{"foot", func(argv []string) []string { return argv }},
	{"xterm", dashE},
}

// Launcher opens terminals. The zero value is not usable; use New.
type Launcher struct {
	goos     string
	getenv   func(string) string
	lookPath func(string) (string, error)
	start    func(cmd *exec.Cmd) error
}

// New returns the Launcher of this OS.
func New() *Launcher {
	return &Launcher{goos: runtime.GOOS, getenv: os.Getenv, lookPath: exec.LookPath, start: startDetached}
}

// Open starts a terminal window running argv and returns once it started;
// the window lives on its own. ErrNotFound means the caller should show the
// command for the person to run.
func (l *Launcher) Open(argv []string) error {
	cmd, err := l.Command(argv)
	if err != nil {
		return err
	}
	if err := l.start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return nil
}

// Command is the process that opens a terminal running argv.
func (l *Launcher) Command(argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("terminal: no command")
	}
	switch l.goos {
	case "darwin":
		return exec.Command("/usr/bin/osascript",
			"-e", `tell application "Terminal" to do script `+appleScriptString(shellJoin(argv)),
			"-e", `tell application "Terminal" to activate`), nil
	case "windows":
		if wt, err := l.lookPath("wt.exe"); err == nil {
			// wt splits its command line at every ";", inside arguments too,
			// unless it is escaped.
			escaped := make([]string, len(argv))
			for i, a := range argv {
				escaped[i] = strings.ReplaceAll(a, ";", `\;`)
			}
			return exec.Command(wt, append([]string{"new-tab", "--title", "Sandtray", "--"}, escaped...)...), nil
		}
		// start opens a new console window; /k keeps it after the shell ends.
		return exec.Command("cmd.exe", append([]string{"/c", "start", "Sandtray", "cmd.exe", "/k"}, argv...)...), nil
	}
	return l.linuxCommand(argv)
}

// linuxCommand tries $TERMINAL, then linuxEmulators, in PATH.
func (l *Launcher) linuxCommand(argv []string) (*exec.Cmd, error) {
	if t := strings.TrimSpace(l.getenv("TERMINAL")); t != "" {
		fields := strings.Fields(t) // "kitty" or "alacritty --class x"
		if path, err := l.lookPath(fields[0]); err == nil {
			args := dashE(argv)
			if e, ok := find(fields[0]); ok {
				args = e.args(argv)
			}
			return exec.Command(path, append(fields[1:], args...)...), nil
		}
	}
	for _, e := range linuxEmulators {
		if path, err := l.lookPath(e.name); err == nil {
			return exec.Command(path, e.args(argv)...), nil
		}
	}
	return nil, fmt.Errorf("%w: install one (such as xterm) or set $TERMINAL", ErrNotFound)
}

func find(name string) (emulator, bool) {
	base := name[strings.LastIndexByte(name, '/')+1:]
	for _, e := range linuxEmulators {
		if e.name == base {
			return e, true
		}
	}
	return emulator{}, false
}

// shellJoin quotes argv for a POSIX shell.
func shellJoin(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
			quoted[i] = a
			continue
		}
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// appleScriptString is s as an AppleScript string literal.
func appleScriptString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
