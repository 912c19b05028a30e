//go:build windows

package statedir

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockedByte is the one byte LockFileEx locks: far past the process id the
// file holds, which others read while it is locked.
var lockedByte = windows.Overlapped{Offset: 0xFFFFFFFE}

// lockFileOS takes an exclusive lock on f without waiting: false when
// another handle holds it.
func lockFileOS(f *os.File) (bool, error) {
	ol := lockedByte
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) {
	ol := lockedByte
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
