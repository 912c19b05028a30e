package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/sandtray/sandtray/internal/filelock"
)

// LockFile is the file in a state dir whose lock an engine holds while it
// runs; it holds the engine's process id.
const LockFile = "engine.lock"

// ErrLocked is what TakeLock returns when another engine holds the dir.
var ErrLocked = errors.New("another Sandtray engine is running on this state dir")

// ErrCannotLock is what TakeLock returns when the dir's file system takes
// no locks (an NFS mount without its lock service): the caller may go on
// without one, saying so.
var ErrCannotLock = errors.New("the state dir's file system takes no locks")

// lockFile is filelock.TryLock; tests put a file system that takes no
// locks in its place.
var lockFile = filelock.TryLock

// Lock is a running engine's hold on its state dir. An engine is its state
// dir: two at once on one would each take the other's sandboxes for its own
// and reap them. The OS drops the lock when the process ends, however it
// ends, so a crash leaves nothing to clean up.
type Lock struct {
	f    *os.File
	once sync.Once
}

// TakeLock takes dir's lock (creating dir), or fails at once, with an
// error wrapping ErrLocked that names the holder's process id, when
// another engine holds it.
func TakeLock(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state dir lock: %w", err)
	}
	got, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrCannotLock, path, err)
	}
	if !got {
		f.Close()
		holder := ""
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				holder = fmt.Sprintf(" (process %d)", pid)
			}
		}
		return nil, fmt.Errorf("%w%s: %s", ErrLocked, holder, dir)
	}
	// Only the holder writes: whoever reads it while locked reads the holder's.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release gives the state dir up; again, or on a nil Lock, it does
// nothing.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		filelock.Unlock(l.f)
		l.f.Close()
	})
}
