package keychain

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
)

// fakeKeyring is an OS keychain in memory.
type fakeKeyring map[string]string

func (f fakeKeyring) Get(s, u string) (string, error) {
	if v, ok := f[s+"/"+u]; ok {
		return v, nil
	}
	return "", keyring.ErrNotFound
}
func (f fakeKeyring) Set(s, u, v string) error { f[s+"/"+u] = v; return nil }
func (f fakeKeyring) Delete(s, u string) error {
	if _, ok := f[s+"/"+u]; !ok {
		return keyring.ErrNotFound
	}
	delete(f, s+"/"+u)
	return nil
}

// deadKeyring is a keychain that does not answer.
type deadKeyring struct{}

func (deadKeyring) Get(string, string) (string, error) {
	return "", errors.New("The name org.freedesktop.secrets was not provided by any .service files")
}
func (deadKeyring) Set(string, string, string) error { return errors.New("no") }
func (deadKeyring) Delete(string, string) error      { return errors.New("no") }

func TestKeychainWhenItAnswers(t *testing.T) {
	dir := t.TempDir()
	kr := fakeKeyring{}
	s := newWith(dir, kr)
	if _, ok := s.Backend(); !ok {
		t.Fatal("a keychain that answers is not used")
	}
	if err := s.Set("API_KEY", "sk-1"); err != nil {
		t.Fatal(err)
	}
	if kr["sandtray/API_KEY"] != "sk-1" {
		t.Fatalf("keychain %v", kr)
	}
	if _, err := os.Stat(s.File()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the value went to the file too")
	}
	if v, err := s.Get("API_KEY"); v != "sk-1" || err != nil {
		t.Fatal(v, err)
	}
	if err := s.Delete("API_KEY"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("API_KEY"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

func TestFileWhereNoKeychainAnswers(t *testing.T) {
	dir := t.TempDir()
	s := newWith(dir, deadKeyring{})
	where, ok := s.Backend()
	if ok || !strings.Contains(where, FileName) || !strings.Contains(where, "org.freedesktop.secrets") {
		t.Fatalf("backend %q %v", where, ok)
	}
	if err := s.Set("API_KEY", "sk-2"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.File())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file %v %v", st, err)
	}
	if v, err := newWith(dir, deadKeyring{}).Get("API_KEY"); v != "sk-2" || err != nil {
		t.Fatal(v, err)
	}
	if err := s.Delete("API_KEY"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("API_KEY"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}
