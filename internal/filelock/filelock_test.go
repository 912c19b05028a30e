package filelock

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOneHolderAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if got, err := TryLock(a); !got || err != nil {
		t.Fatalf("the first lock: %v %v", got, err)
	}
	if got, err := TryLock(b); got || err != nil {
		t.Fatalf("a second open's lock while the first holds it: %v %v, want false without an error", got, err)
	}
	Unlock(a)
	if got, err := TryLock(b); !got || err != nil {
		t.Fatalf("the lock after the first gave it up: %v %v", got, err)
	}
}
