package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/internal/keychain"
)

func TestSecretsAddBindRemove(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte("# mine\n[egress]\nask = true # keep\n\n[secrets.OLD]\nhosts = [\"old.example.com\"]\nenv = \"OLD\"\n"), 0o600)
	s := New(path)
	s.kc = keychain.NewFile(dir) // never the OS keychain of the machine running the test
	if err := s.AddSecret("API_KEY", "sk-secret-1", []string{"api.example.com"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSecret("API_KEY", "x", []string{"a.com"}); err == nil {
		t.Fatal("a second API_KEY was added")
	}
	if err := s.AddSecret("BAD", "x", []string{"not a host"}); err == nil || !strings.Contains(err.Error(), "secrets.BAD.hosts[0]") {
		t.Fatalf("bad host: %v", err)
	}
	if err := s.BindSecret("API_KEY", []string{"api.example.com", "*.example.org"}); err != nil {
		t.Fatal(err)
	}
	if err := s.BindSecret("OLD", []string{"new.example.com"}); err != nil {
		t.Fatal(err)
	}
	list, err := s.Secrets()
	if err != nil || len(list) != 2 {
		t.Fatalf("%+v %v", list, err)
	}
	if a := list[0]; a.Name != "API_KEY" || strings.Join(a.Hosts, ",") != "api.example.com,*.example.org" || a.Source != "keychain" || !a.HasValue {
		t.Fatalf("API_KEY = %+v", a)
	}
	if o := list[1]; o.Name != "OLD" || strings.Join(o.Hosts, ",") != "new.example.com" || o.Source != "env OLD" {
		t.Fatalf("OLD = %+v", o)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "sk-secret-1") || !strings.Contains(string(b), "ask = true # keep") || !strings.Contains(string(b), "# mine") {
		t.Fatalf("config.toml:\n%s", b)
	}
	if v, err := keychain.NewFile(dir).Get("API_KEY"); v != "sk-secret-1" || err != nil {
		t.Fatalf("stored value %q %v", v, err)
	}
	if err := s.RemoveSecret("API_KEY"); err != nil {
		t.Fatal(err)
	}
	if _, err := keychain.NewFile(dir).Get("API_KEY"); err == nil {
		t.Fatal("the value is still stored")
	}
	if list, _ := s.Secrets(); len(list) != 1 || list[0].Name != "OLD" {
		t.Fatalf("after remove: %+v", list)
	}
}

func TestSecretsKeepASymlinkedConfig(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "sandtray.toml")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte("[egress]\nask = true\n"), 0o640)
	path := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, path); err != nil {
		t.Skip(err)
	}
	s := New(path)
	s.kc = keychain.NewFile(dir)
	if err := s.AddSecret("API_KEY", "sk-1", []string{"api.example.com"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("config.toml is no longer a symlink")
	}
	b, _ := os.ReadFile(real)
	if fi, _ := os.Stat(real); !strings.Contains(string(b), "[secrets.API_KEY]") || fi.Mode().Perm() != 0o640 {
		t.Fatalf("target %v:\n%s", fi.Mode(), b)
	}
	// A refused host leaves no value behind.
	if err := s.AddSecret("OTHER", "sk-2", []string{"bad host"}); err == nil {
		t.Fatal("a bad host was accepted")
	}
	if _, err := s.kc.Get("OTHER"); err == nil {
		t.Fatal("the refused secret's value was kept")
	}
}
