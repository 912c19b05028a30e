//go:build cgo

package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/app/settings"
	"github.com/sandtray/sandtray/ui"
)

// TestSettingsAdapterRoundTrip saves through the adapter the window uses
// and reads the result with the engine's loader.
func TestSettingsAdapterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte("# mine\n[limits]\nmemory_mb = 1024 # default\n"), 0o600)
	applied := 0
	s := uiSettings{s: settings.New(path), apply: func(context.Context) ([]string, error) {
		applied++
		return []string{"http.listen"}, nil
	}}
	fields, err := s.Fields()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]ui.SettingKind{}
	for i, f := range fields {
		kinds[f.Key] = f.Kind
		if f.Key == "limits.memory_mb" {
			fields[i].Value = "3072"
		}
		if f.Key == "pool.size" && f.Restart || f.Key == "http.listen" && !f.Restart {
			t.Errorf("%s: restart %v", f.Key, f.Restart)
		}
	}
	if kinds["host.allowed_roots"] != ui.SettingFolders || kinds["sandbox.allow_network"] != ui.SettingBool ||
		kinds["limits.exec_timeout"] != ui.SettingDuration {
		t.Errorf("kinds do not line up between app/settings and ui: %v", kinds)
	}
	saved, err := s.Save(fields)
	if err != nil || len(saved.Changed) != 1 || applied != 1 || !saved.Applied || len(saved.Restart) != 1 {
		t.Fatalf("Save = %+v, %v; applied %d times", saved, err, applied)
	}
	cfg, err := config.Load(path)
	if err != nil || cfg.Limits.MemoryMB != 3072 {
		t.Errorf("LoadConfig = %v, %v", cfg.Limits.MemoryMB, err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "memory_mb = 3072 # default") {
		t.Errorf("comment lost:\n%s", b)
	}
}

func TestClientsAdapter(t *testing.T) {
	home := t.TempDir()
	c := uiClients{opts: install.Options{Home: home, ShimPath: "/opt/s/sandtray-mcp", GOOS: "linux"}}
	if _, err := c.Connect("cursor"); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.List() {
		if (st.Name == "cursor") != (st.Connected && st.Current) {
			t.Errorf("%+v", st)
		}
	}
	if msg, err := c.Disconnect("cursor"); err != nil || !strings.Contains(msg, "Removed sandtray") {
		t.Errorf("Disconnect = %q, %v", msg, err)
	}
}
