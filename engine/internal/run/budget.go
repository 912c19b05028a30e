package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Budget bounds the output an engine keeps for calls that may become jobs
// and for jobs (docs/security.md F32): the bytes held in memory by all of them
// together, and the bytes spilled to files in the engine's own folder once
// memory is full. A job's output past both is counted and dropped, and
// job_status says so (JobOutput.Since). One Budget serves one engine; it is
// safe for concurrent use.
type Budget struct {
	memory, disk int64  // the limits
	streamFree   int64  // bytes of each stream's copy held with no grant (BudgetConfig.StreamFree)
	dir          string // the spill folder, made on the first spill

	mu               sync.Mutex
	inMemory, onDisk int64 // granted; guarded by mu
	made, closed     bool  // guarded by mu
}

// BudgetConfig is what NewBudget needs.
type BudgetConfig struct {
	// Memory and Disk bound the bytes held in memory and spilled to files
	// (limits.job_output_memory_bytes, limits.job_output_disk_bytes); Disk 0
	// spills nothing.
	Memory, Disk int64
	// StreamFree is how much of each stream's copy (Output's stdout and
	// stderr, kept for the result and the activity log) is held without a
	// grant: what the model is shown of a call (limits.output_bytes), so a
	// full budget never shortens a result, only the log's longer copy.
	StreamFree int
	// Dir is the engine's own spill folder (see SpillDir); it is removed
	// by Close.
	Dir string
}

// NewBudget returns a Budget with nothing granted.
func NewBudget(c BudgetConfig) *Budget {
	return &Budget{memory: c.Memory, disk: c.Disk, streamFree: int64(c.StreamFree), dir: c.Dir}
}

// Used is what is granted now: bytes in memory and on disk.
func (b *Budget) Used() (memory, disk int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inMemory, b.onDisk
}

// takeMemory grants n bytes of memory, all or none.
func (b *Budget) takeMemory(n int64) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inMemory+n > b.memory {
		return false
	}
	b.inMemory += n
	return true
}

func (b *Budget) giveMemory(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.inMemory -= n
	b.mu.Unlock()
}

// takeDisk grants up to n bytes of spill file.
func (b *Budget) takeDisk(n int64) int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0
	}
	g := max(min(n, b.disk-b.onDisk), 0)
	b.onDisk += g
	return g
}

func (b *Budget) giveDisk(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.onDisk -= n
	b.mu.Unlock()
}

// spillFile makes a new file in the spill folder, for one job's output.
func (b *Budget) spillFile() (*os.File, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("the engine is closing")
	}
	if !b.made {
		if err := os.MkdirAll(b.dir, 0o700); err != nil {
			return nil, err
		}
		b.made = true
	}
	return os.CreateTemp(b.dir, "job-*.out")
}

// Close removes the spill folder and refuses spills from now on. The
// outputs still open keep reading their files (an open file outlives its
// name), until they are released.
func (b *Budget) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.dir == "" {
		return nil
	}
	return os.RemoveAll(b.dir)
}

// spillRoot is the folder of the state dir that holds each engine's spill
// folder.
const spillRoot = "job-output"

// SpillDir is a new engine's own spill folder in stateDir, named by its
// process id and tag. Folders left by engines whose process is gone (a
// crash, a kill) are removed first; those of running engines that share
// the state dir are left alone.
func SpillDir(stateDir, tag string) string {
	root := filepath.Join(stateDir, spillRoot)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		pid, _, _ := strings.Cut(e.Name(), "-")
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && !processAlive(n) {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
	return filepath.Join(root, fmt.Sprintf("%d-%s", os.Getpid(), tag))
}
