package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinuxEnableStatusDisable drives the real XDG store in a temporary
// XDG_CONFIG_HOME, the way `sandtray autostart` and the tray do.
func TestLinuxEnableStatusDisable(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(cfg, "autostart", "sandtray.desktop")
	if st, err := a.Status(); err != nil || st.Enabled || st.Where != entry {
		t.Fatalf("fresh Status = %+v, %v; want disabled at %s", st, err, entry)
	}
	exe := filepath.Join(t.TempDir(), "my apps", "sandtray")
	st, err := a.Enable(exe)
	if err != nil || !st.Enabled || st.Command != exe {
		t.Fatalf("Enable = %+v, %v; want enabled running %s", st, err, exe)
	}
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[Desktop Entry]", "Type=Application", `Exec="` + exe + `"`, "Name=Sandtray"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("entry lacks %q:\n%s", want, data)
		}
	}
	if _, err := a.Enable(exe); err != nil {
		t.Errorf("enabling twice: %v", err)
	}
	if st, err := a.Disable(); err != nil || st.Enabled {
		t.Fatalf("Disable = %+v, %v", st, err)
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Errorf("entry still there after Disable: %v", err)
	}
	if _, err := a.Disable(); err != nil {
		t.Errorf("disabling twice: %v", err)
	}
}

func TestRelativeExecutableRefused(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	a, _ := New()
	if _, err := a.Enable("bin/sandtray"); err == nil {
		t.Error("Enable accepted a relative path")
	}
}

func TestDesktopTurnedOffEntryIsDisabled(t *testing.T) {
	for _, off := range []string{"Hidden=true", "X-GNOME-Autostart-enabled=false"} {
		path := filepath.Join(t.TempDir(), "sandtray.desktop")
		body := strings.Replace(desktopEntry("/opt/sandtray"), "Terminal=false", "Terminal=false\n"+off, 1)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := (&Autostart{s: xdgEntry{path}}).Status()
		if err != nil || st.Enabled {
			t.Errorf("with %s: Status = %+v, %v; want disabled", off, st, err)
		}
	}
}

func TestExecQuotingRoundTrips(t *testing.T) {
	for _, exe := range []string{
		"/usr/bin/sandtray",
		"/home/a b/.local/bin/sandtray",
		`/odd/"quote"/$HOME/back\slash/50%/sandtray`,
	} {
		line := ""
		for l := range strings.Lines(desktopEntry(exe)) {
			if v, ok := strings.CutPrefix(l, "Exec="); ok {
				line = strings.TrimSpace(v)
			}
		}
		args := splitExec(unescapeValue(line))
		if len(args) != 1 || args[0] != exe {
			t.Errorf("Exec=%s reads back as %q, want [%q]", line, args, exe)
		}
	}
}

// TestDesktopFileValidates runs desktop-file-validate on the entry when the
// machine has it (Debian: desktop-file-utils).
func TestDesktopFileValidates(t *testing.T) {
	tool, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Skip("desktop-file-validate not installed")
	}
	path := filepath.Join(t.TempDir(), "sandtray.desktop")
	os.WriteFile(path, []byte(desktopEntry("/home/a b/.local/bin/sandtray")), 0o644)
	if out, err := exec.Command(tool, path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("desktop-file-validate: %v\n%s", err, out)
	}
}
