package run

import (
	"io/fs"
	"os"
)

// allocated is the file's length: Windows reports no block count through
// os.Stat. It only matters for a writable layer the engine can read, which on
// Windows it never can (Docker Desktop keeps its files inside its VM), so the
// disk watchdog uses Docker's SizeRw there; this keeps the walk correct for
// dense files should a local layer ever be readable.
func allocated(info fs.FileInfo) int64 { return info.Size() }

// processAlive reports whether a process with this pid exists: Windows
// opens a handle only to one that does.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
