package terminal

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var shell = []string{"docker", "exec", "-it", "-w", "/my work", "abc", "sh", "-c", "exec bash"}

// launcher is a Launcher for goos whose PATH holds only the named programs.
func launcher(goos string, env map[string]string, installed ...string) *Launcher {
	return &Launcher{
		goos:   goos,
		getenv: func(k string) string { return env[k] },
		lookPath: func(name string) (string, error) {
			for _, p := range installed {
				if p == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", exec.ErrNotFound
		},
	}
}

func TestCommandPerEmulator(t *testing.T) {
	tests := []struct {
		name      string
		goos      string
		env       map[string]string
		installed []string
		want      []string
	}{
		{"debian alternative", "linux", nil, []string{"xterm", "x-terminal-emulator"},
			append([]string{"/usr/bin/x-terminal-emulator", "-e"}, shell...)},
		{"$TERMINAL wins", "linux", map[string]string{"TERMINAL": "kitty --single-instance"}, []string{"kitty", "x-terminal-emulator"},
			append([]string{"/usr/bin/kitty", "--single-instance"}, shell...)},
		{"$TERMINAL unknown takes -e", "linux", map[string]string{"TERMINAL": "myterm"}, []string{"myterm"},
			append([]string{"/usr/bin/myterm", "-e"}, shell...)},
		{"$TERMINAL missing falls back", "linux", map[string]string{"TERMINAL": "gone"}, []string{"gnome-terminal"},
			append([]string{"/usr/bin/gnome-terminal", "--"}, shell...)},
		{"tilix takes one string", "linux", nil, []string{"tilix"},
			[]string{"/usr/bin/tilix", "-e", `docker exec -it -w '/my work' abc sh -c 'exec bash'`}},
		{"macOS Terminal.app", "darwin", nil, nil,
			[]string{"/usr/bin/osascript", "-e", `tell application "Terminal" to do script "docker exec -it -w '/my work' abc sh -c 'exec bash'"`,
				"-e", `tell application "Terminal" to activate`}},
		{"Windows Terminal", "windows", nil, []string{"wt.exe"},
			append([]string{"/usr/bin/wt.exe", "new-tab", "--title", "Sandtray", "--"}, shell...)},
		{"Windows cmd", "windows", nil, nil,
			append([]string{"cmd.exe", "/c", "start", "Sandtray", "cmd.exe", "/k"}, shell...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := launcher(tt.goos, tt.env, tt.installed...).Command(shell)
			if err != nil {
				t.Fatal(err)
			}
			got := append([]string{cmd.Path}, cmd.Args[1:]...)
			if tt.goos == "windows" && !strings.HasPrefix(tt.want[0], "/") {
				got[0] = cmd.Args[0] // cmd.exe is not in this machine's PATH
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoEmulatorFound(t *testing.T) {
	_, err := launcher("linux", nil).Command(shell)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "$TERMINAL") {
		t.Errorf("err = %v, want ErrNotFound with advice", err)
	}
}

func TestWindowsTerminalSemicolonsEscaped(t *testing.T) {
	cmd, err := launcher("windows", nil, "wt.exe").Command([]string{"docker", "exec", "-it", "abc", "sh", "-c", "a; b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmd.Args[len(cmd.Args)-1]; got != `a\; b` {
		t.Errorf("last argument = %q, want the ; escaped for wt", got)
	}
}
