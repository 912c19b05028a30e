package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// release lays out what the Linux archive holds next to install.sh, with
// stand-ins for the binaries.
func release(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"install.sh", "sandtray.desktop"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		"sandtray":     "#!/bin/sh\necho 'sandtray 9.9.9 (test)'\n",
		"sandtray-mcp": "#!/bin/sh\nexit 0\n",
		"sandtray.png": "not a png",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// execArg reads the first argument of a desktop entry's Exec line as a
// launcher does (Desktop Entry Specification 1.5): the string value's
// escapes first, then %% as %, then the double-quoted argument's escapes.
func execArg(t *testing.T, line string) string {
	t.Helper()
	v := strings.TrimPrefix(line, "Exec=")
	var s strings.Builder
	for i := 0; i < len(v); i++ { // string-level escapes
		if v[i] == '\\' && i+1 < len(v) {
			i++
			switch v[i] {
			case 's':
				s.WriteByte(' ')
			case 'n':
				s.WriteByte('\n')
			case 't':
				s.WriteByte('\t')
			case 'r':
				s.WriteByte('\r')
			default:
				s.WriteByte(v[i])
			}
			continue
		}
		s.WriteByte(v[i])
	}
	v = s.String()
	if !strings.HasPrefix(v, `"`) {
		t.Fatalf("Exec %q: the path is not quoted", line)
	}
	var arg strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			if rest := v[i+1:]; rest != "" && rest[0] != ' ' {
				t.Fatalf("Exec %q: text after the closing quote", line)
			}
			return arg.String()
		case c == '\\' && i+1 < len(v) && strings.IndexByte("\"`$\\", v[i+1]) >= 0:
			i++
			arg.WriteByte(v[i])
		case c == '%' && i+1 < len(v) && v[i+1] == '%':
			i++
			arg.WriteByte('%')
		case c == '%' || strings.IndexByte("\"`$\\", c) >= 0:
			t.Fatalf("Exec %q: %q unescaped inside the quotes", line, c)
		default:
			arg.WriteByte(c)
		}
	}
	t.Fatalf("Exec %q: no closing quote", line)
	return ""
}

// TestInstallShQuotesAnyPrefix (F40): install.sh --prefix with characters a
// sed replacement or a desktop entry would read as their own (& / | \ and
// quotes, $, %, spaces) installs there, and the menu entry's Exec names
// exactly the installed binary; --uninstall removes it again.
func TestInstallShQuotesAnyPrefix(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	here := release(t)
	for _, name := range []string{
		"plain",
		"a&b",
		"x|y/z",
		"with space",
		`q"uote`,
		"it's",
		`back\slash\n`,
		"dollar$HOME`id`",
		"pct%u%%",
	} {
		t.Run(name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), name, "usr")
			cmd := exec.Command(sh, filepath.Join(here, "install.sh"), "--prefix", prefix)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("install.sh --prefix %q: %v\n%s", prefix, err, out)
			}
			bin := filepath.Join(prefix, "bin", "sandtray")
			entry, err := os.ReadFile(filepath.Join(prefix, "share", "applications", "sandtray.desktop"))
			if err != nil {
				t.Fatal(err)
			}
			var execLine string
			for line := range strings.Lines(string(entry)) {
				if strings.HasPrefix(line, "Exec=") {
					execLine = strings.TrimSuffix(line, "\n")
				}
			}
			if got := execArg(t, execLine); got != bin {
				t.Errorf("Exec names %q, want %q (line %q)", got, bin, execLine)
			}
			if !strings.Contains(string(entry), "Name=Sandtray\n") || !strings.Contains(string(entry), "Icon=sandtray\n") {
				t.Errorf("the rest of the entry changed:\n%s", entry)
			}
			if out, err := exec.Command(bin).Output(); err != nil || !strings.Contains(string(out), "9.9.9") {
				t.Errorf("the installed binary: %v %q", err, out)
			}
			cmd = exec.Command(sh, filepath.Join(here, "install.sh"), "--prefix", prefix, "--uninstall")
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("--uninstall: %v\n%s", err, out)
			}
			if _, err := os.Stat(bin); !os.IsNotExist(err) {
				t.Errorf("after --uninstall %s: %v", bin, err)
			}
		})
	}
}
