package autostart

import (
	"errors"
	"io/fs"
	"strings"
)

// runKeyPath is the per-user key Windows reads at login; runValueName is
// Sandtray's value in it.
const (
	runKeyPath   = `Software\Microsoft\Windows\CurrentVersion\Run`
	runValueName = "Sandtray"
)

// registryKey is the part of an open registry key runKey uses (the Windows
// build passes golang.org/x/sys/windows/registry's Key, whose missing-value
// error it turns into fs.ErrNotExist).
type registryKey interface {
	GetStringValue(name string) (string, uint32, error)
	SetStringValue(name, value string) error
	DeleteValue(name string) error
	Close() error
}

// runKey is the value Sandtray in HKCU\...\CurrentVersion\Run.
type runKey struct {
	open func() (registryKey, error)
}

func (r runKey) where() string { return `HKCU\` + runKeyPath + `\` + runValueName }

// isAbs accepts C:\... and \\server\share\... paths.
func (runKey) isAbs(p string) bool {
	drive := len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		('A' <= p[0] && p[0] <= 'Z' || 'a' <= p[0] && p[0] <= 'z')
	return drive || strings.HasPrefix(p, `\\`)
}

func (r runKey) write(exe string) error {
	k, err := r.open()
	if err != nil {
		return err
	}
	defer k.Close()
	return k.SetStringValue(runValueName, runCommand(exe))
}

func (r runKey) remove() error {
	k, err := r.open()
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.DeleteValue(runValueName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (r runKey) read() (string, bool, error) {
	k, err := r.open()
	if err != nil {
		return "", false, err
	}
	defer k.Close()
	v, _, err := k.GetStringValue(runValueName)
	if err != nil {
		return "", false, err
	}
	exe := runProgram(v)
	return exe, exe != "", nil
}

// runCommand is the Run value for exe: the path in double quotes, which
// Windows needs when it has spaces ("C:\Program Files\...").
func runCommand(exe string) string { return `"` + exe + `"` }

// runProgram reads the program back out of a Run value.
func runProgram(v string) string {
	v = strings.TrimSpace(v)
	if rest, ok := strings.CutPrefix(v, `"`); ok {
		exe, _, _ := strings.Cut(rest, `"`)
		return exe
	}
	exe, _, _ := strings.Cut(v, " ")
	return exe
}
