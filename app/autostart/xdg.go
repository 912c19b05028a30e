package autostart

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandtray/sandtray/internal/atomicfile"
)

// xdgEntry is a freedesktop autostart entry:
// $XDG_CONFIG_HOME/autostart/sandtray.desktop, which GNOME, KDE, Xfce and
// the other XDG desktops run at login.
type xdgEntry struct{ path string }

// xdgAutostartDir is $XDG_CONFIG_HOME/autostart, or ~/.config/autostart when
// the variable is unset or relative (the spec says to ignore relative ones).
func xdgAutostartDir() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "autostart"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "autostart"), nil
}

func (x xdgEntry) where() string { return x.path }

func (xdgEntry) isAbs(p string) bool { return strings.HasPrefix(p, "/") }

func (x xdgEntry) write(exe string) error {
	return atomicfile.Write(x.path, []byte(desktopEntry(exe)), 0o644)
}

func (x xdgEntry) remove() error {
	if err := os.Remove(x.path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// read finds the entry's program and whether the desktop will run it: an
// entry with Hidden=true or X-GNOME-Autostart-enabled=false is off.
func (x xdgEntry) read() (string, bool, error) {
	data, err := os.ReadFile(x.path)
	if err != nil {
		return "", false, err
	}
	var exe string
	enabled := true
	inEntry := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inEntry = line == "[Desktop Entry]"
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !inEntry || !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "Exec":
			if args := splitExec(unescapeValue(strings.TrimSpace(value))); len(args) > 0 {
				exe = args[0]
			}
		case "Hidden":
			enabled = enabled && strings.TrimSpace(value) != "true"
		case "X-GNOME-Autostart-enabled":
			enabled = enabled && strings.TrimSpace(value) != "false"
		}
	}
	return exe, enabled && exe != "", sc.Err()
}

// desktopEntry is the autostart entry that runs exe.
func desktopEntry(exe string) string {
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=Sandtray\n" +
		"Comment=Sandboxes for AI assistants, in the system tray\n" +
		"Exec=" + escapeValue(quoteExecArg(exe)) + "\n" +
		"Icon=sandtray\n" +
		"Terminal=false\n" +
		"X-GNOME-Autostart-enabled=true\n"
}

// execReserved are the characters that make an Exec argument need quotes
// (Desktop Entry Specification, "The Exec key").
const execReserved = " \t\n\"'\\><~|&;$*?#()`"

// quoteExecArg quotes one Exec argument when it needs it; inside quotes,
// `"`, "`", "$" and "\" take a backslash. A "%" is doubled: a lone one
// would be a field code.
func quoteExecArg(arg string) string {
	arg = strings.ReplaceAll(arg, "%", "%%")
	if !strings.ContainsAny(arg, execReserved) {
		return arg
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range arg {
		if strings.ContainsRune("\"`$\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// splitExec undoes quoteExecArg over a whole (unescaped) Exec value.
func splitExec(s string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			inQuote, have = !inQuote, true
		case !inQuote && (c == ' ' || c == '\t'):
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "%%", "%")
	}
	return args
}

// escapeValue applies a key file's string escapes, which come before the
// Exec quoting rule: a backslash is written twice, controls as \n \t \r.
func escapeValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s)
}

// unescapeValue undoes escapeValue (and \s, a space).
func unescapeValue(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r", `\s`, " ").Replace(s)
}
