//go:build unix

package statedir

import (
	"errors"
	"os"
	"syscall"
)

// lockFileOS takes f's exclusive flock without waiting: false when another
// open file holds it (another process, or another Lock in this one).
func lockFileOS(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
