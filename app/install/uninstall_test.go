package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUninstallRemovesOnlySandtray(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, path, cursorConfig, 0o640)
	if _, err := Install("cursor", opts(home)); err != nil {
		t.Fatal(err)
	}
	connected, _ := os.ReadFile(path)

	res, err := Uninstall("cursor", opts(home))
	if err != nil || res.Status != Removed {
		t.Fatalf("Uninstall = %+v, %v; want Removed", res, err)
	}
	got, _ := os.ReadFile(path)
	for _, keep := range []string{`"theme": "dark <b>&</b>"`, `12345678901234567890`, `"TOKEN": "x"`} {
		if !strings.Contains(string(got), keep) {
			t.Errorf("uninstall lost %s:\n%s", keep, got)
		}
	}
	servers := readJSON(t, path)["mcpServers"].(map[string]any)
	if diff := cmp.Diff([]string{"github"}, keys(servers)); diff != "" {
		t.Errorf("servers after uninstall (-want +got):\n%s", diff)
	}
	if backup, _ := os.ReadFile(res.Backup); string(backup) != string(connected) {
		t.Errorf("backup %s is not the config before the change", res.Backup)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}

	again, err := Uninstall("cursor", opts(home))
	if err != nil || again.Status != Absent || !strings.Contains(again.String(), "nothing changed") {
		t.Errorf("second Uninstall = %v %q, %v; want Absent", again.Status, again, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(got) {
		t.Error("second Uninstall rewrote the file")
	}
}

func TestUninstallWithoutConfigWritesNothing(t *testing.T) {
	home := t.TempDir()
	res, err := Uninstall("claude-code", opts(home))
	if err != nil || res.Status != Absent {
		t.Fatalf("Uninstall = %+v, %v", res, err)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("Uninstall created %v", entries)
	}
}

func TestUninstallMalformedConfigIsLeftAlone(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".claude.json")
	writeFile(t, path, `{"mcpServers": {"sandtray": {},}}`, 0o600)
	if _, err := Uninstall("claude-code", opts(home)); err == nil || !strings.Contains(err.Error(), "not changed") {
		t.Errorf("err = %v, want the file named and left alone", err)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
