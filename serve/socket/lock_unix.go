//go:build unix

package socket

import (
	"fmt"
	"os"

	"github.com/sandtray/sandtray/internal/filelock"
)

// acquireLock takes an exclusive, non-blocking flock on the lock file next to
// the socket and keeps it for the listener's life. Without it two engines
// started at once (two shims launching together) could each decide the socket
// is stale, and the second would unlink the first one's fresh socket. The file
// itself stays: deleting a lock file races with the next locker.
func acquireLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, socketMode)
	if err != nil {
		return nil, fmt.Errorf("socket lock: %w", err)
	}
	got, err := filelock.TryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("socket lock %s: %w", path, err)
	}
	if !got {
		f.Close()
		return nil, fmt.Errorf("%w: %s is locked by another engine", ErrAlreadyRunning, path)
	}
	return f, nil
}
