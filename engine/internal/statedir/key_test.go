package statedir

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestKeyIsStableAndPrivate: the key is made once, private to the user,
// read back the same by a later store of the same dir, and differs in
// another dir.
func TestKeyIsStableAndPrivate(t *testing.T) {
	dir := t.TempDir()
	s, _ := New(dir)
	k, err := s.Key()
	if err != nil || len(k) != 2*keyBytes {
		t.Fatalf("Key = %q, %v; want %d hex digits", k, err, 2*keyBytes)
	}
	if st, err := os.Stat(filepath.Join(dir, keyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, %v; want 0600", st.Mode(), err)
	}
	again, _ := New(dir)
	if k2, err := again.Key(); k2 != k || err != nil {
		t.Errorf("a second store of the dir read %q, %v; want %q", k2, err, k)
	}
	other, _ := New(t.TempDir())
	if k3, _ := other.Key(); k3 == k {
		t.Error("two state dirs have the same key")
	}
}

// TestKeyOneUnderARace: engines starting on a new state dir at once all
// get the one key that ends up in the file.
func TestKeyOneUnderARace(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	keys := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, _ := New(dir)
			keys[i], _ = s.Key()
		})
	}
	wg.Wait()
	for _, k := range keys {
		if k == "" || k != keys[0] {
			t.Fatalf("racing engines got keys %q; want one and the same", keys)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "."+keyFile+".tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary key files left: %v", left)
	}
}

// TestKeyDamagedIsRefused: a damaged key is an error naming the file, and
// is never replaced (the sandboxes made with it would be lost to the engine).
func TestKeyDamagedIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, keyFile)
	os.WriteFile(path, []byte("short\n"), 0o600)
	s, _ := New(dir)
	if k, err := s.Key(); err == nil {
		t.Fatalf("a damaged key was accepted: %q", k)
	}
	if b, _ := os.ReadFile(path); string(b) != "short\n" {
		t.Errorf("the damaged key file was changed to %q", b)
	}
}

// TestHas: Has tells a saved state from none, and forgets a removed one.
func TestHas(t *testing.T) {
	s, _ := New(t.TempDir())
	if s.Has("x") {
		t.Error("Has before any save")
	}
	s.Save("x", struct{}{})
	if !s.Has("x") {
		t.Error("no Has after a save")
	}
	s.Remove("x")
	if s.Has("x") {
		t.Error("Has after Remove")
	}
}
