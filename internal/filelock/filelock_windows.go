//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockedByte is the one byte LockFileEx locks: far past anything the file
// holds, which others may read while it is locked.
var lockedByte = windows.Overlapped{Offset: 0xFFFFFFFE}

// TryLock takes f's exclusive lock: false when another handle holds it.
func TryLock(f *os.File) (bool, error) {
	ol := lockedByte
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// Unlock gives f's lock up.
func Unlock(f *os.File) {
	ol := lockedByte
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
