//go:build unix

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes f's exclusive lock: false when another open file holds it
// (another process, or another open of the file in this one).
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// Unlock gives f's lock up.
func Unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
