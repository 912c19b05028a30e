package hostfs

import (
	"fmt"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Limits bound one copy or export in either direction (config
// limits.max_copy_bytes and limits.max_copy_files). Zero means no limit: a
// person saving files through the GUI is not bound by what binds a model.
type Limits struct {
	MaxBytes int64 // the files' sizes added up, holes of sparse files included
	MaxFiles int   // files, folders and links
}

// Budget counts what one copy has taken against its Limits.
type Budget struct {
	Limits
	files int
	bytes int64
}

// Take charges one entry of size bytes and refuses it, with a sentence
// naming the limit and what to do, when it goes over either limit.
func (b *Budget) Take(size int64) error {
	b.files++
	b.bytes += size
	if b.MaxFiles > 0 && b.files > b.MaxFiles {
		return fmt.Errorf("this copy holds more than limits.max_copy_files (%d files and folders); copy a smaller folder, or pack it into one archive first (tar czf in the sandbox), or ask the user to raise limits.max_copy_files in config.toml: %w",
			b.MaxFiles, sandbox.ErrTooLarge)
	}
	return b.CheckBytes(b.bytes)
}

// CheckBytes refuses a copy of n bytes over the byte limit.
func (l Limits) CheckBytes(n int64) error {
	if l.MaxBytes > 0 && n > l.MaxBytes {
		return fmt.Errorf("this copy is over limits.max_copy_bytes (%s; sparse files count at their full size); copy a smaller file or folder, or compress it first, or ask the user to raise limits.max_copy_bytes in config.toml: %w",
			mib(l.MaxBytes), sandbox.ErrTooLarge)
	}
	return nil
}

// reserveBytes is the space a copy leaves free on the host's disk.
const reserveBytes = 256 << 20

// CheckFree refuses to write n more bytes into dir when that would leave
// less than reserveBytes free on its filesystem.
func CheckFree(dir string, n int64) error {
	free, err := freeBytes(dir)
	if err != nil || free < 0 {
		return nil // unknown: the byte limit still holds
	}
	if free-n < reserveBytes {
		return fmt.Errorf("the host has %s free where %s goes, and Sandtray keeps %s free; ask the user to free space on the host, or copy less: %w",
			mib(free), dir, mib(reserveBytes), sandbox.ErrTooLarge)
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
