package run

import (
	"fmt"
	"os"
	"sync"

	"github.com/sandtray/sandtray/engine/internal/safetext"
)

// JobOutputKept caps a background job's combined output held for job_status.
const JobOutputKept = 8 << 20

// Why a job's output was dropped, as job_status tells the model.
const (
	droppedCap = "a job keeps at most 8 MiB of output; send long output to a file in the sandbox " +
		"(command > out.log) and read the part you need with read_file"
	droppedBudget = "the engine's job-output budget is full (its jobs share limits.job_output_memory_bytes " +
		"and limits.job_output_disk_bytes); stop jobs you no longer need with job_stop, or send long output " +
		"to a file in the sandbox and read it with read_file"
)

// JobOutput is a call's combined output as job_status reads it, from any
// offset while the run still writes it. Its first bytes are held in memory
// as far as its Budget grants, the next in a spill file of the budget's,
// up to max in all; the rest is counted and dropped, and Since says so.
// Offsets count every byte written, dropped ones too, so a caller paging
// with next_offset stays where the job is.
type JobOutput struct {
	budget *Budget // nil: memory without bound, no spill (tests)
	max    int64

	mu       sync.Mutex
	mem      chunks   // output [0, mem.n)
	charged  int64    // memory granted for mem
	spilling bool     // memory was refused: the rest goes to file
	file     *os.File // output [mem.n, kept()), nil until the first spill
	onDisk   int64    // bytes in file, all granted
	total    int64    // bytes written; those past kept() were dropped
	why      string   // why they were dropped
	released bool
}

// NewJobOutput returns a JobOutput that keeps up to max bytes, in memory
// without bound: for tests and callers that bound it otherwise.
func NewJobOutput(max int) *JobOutput { return &JobOutput{max: int64(max)} }

// newJobOutput returns a JobOutput under budget b.
func newJobOutput(b *Budget) *JobOutput { return &JobOutput{budget: b, max: JobOutputKept} }

// kept is how many bytes from 0 can be read. Callers hold mu.
func (j *JobOutput) kept() int64 { return j.mem.n + j.onDisk }

func (j *JobOutput) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	dropping := j.total > j.kept()
	j.total += int64(len(p))
	if dropping || j.released {
		return len(p), nil
	}
	n, why := j.store(p)
	if n < len(p) && j.why == "" {
		j.why = why
	}
	return len(p), nil
}

// store keeps what it may of p: in memory while the budget grants it, then
// in the spill file. It returns how much it kept and why not the rest.
func (j *JobOutput) store(p []byte) (int, string) {
	cut := ""
	if room := j.max - j.kept(); int64(len(p)) > room {
		p, cut = p[:room], droppedCap
	}
	n := 0
	for !j.spilling && n < len(p) {
		if j.mem.room() == 0 {
			size := j.mem.nextSize(j.max)
			if !j.budget.takeMemory(size) {
				j.spilling = true
				break
			}
			j.charged += size
			j.mem.grow(size)
		}
		n += j.mem.fill(p[n:])
	}
	if n < len(p) {
		m, why := j.spill(p[n:])
		if n += m; why != "" {
			return n, why
		}
	}
	return n, cut
}

// spill appends p to the spill file as far as the budget grants.
func (j *JobOutput) spill(p []byte) (int, string) {
	g := j.budget.takeDisk(int64(len(p)))
	if g == 0 {
		return 0, droppedBudget
	}
	if j.file == nil {
		f, err := j.budget.spillFile()
		if err != nil {
			j.budget.giveDisk(g)
			return 0, fmt.Sprintf("the engine could not spill it to a file (%v)", err)
		}
		j.file = f
	}
	n, err := j.file.WriteAt(p[:g], j.onDisk)
	j.onDisk += int64(n)
	j.budget.giveDisk(g - int64(n))
	switch {
	case err != nil:
		return n, fmt.Sprintf("the engine could not write its spill file (%v)", err)
	case g < int64(len(p)):
		return n, droppedBudget
	}
	return n, ""
}

// Lost counts n bytes the run produced that never reached Write (a kernel
// stops sending past its cap and counts the rest).
func (j *JobOutput) Lost(n int64) {
	if n <= 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.total += n
	if j.why == "" {
		j.why = droppedCap
	}
}

// Gap is output a job printed that was not kept: offsets [From, To), and
// why, as a clause for the model.
type Gap struct {
	From, To int64
	Why      string
}

// Since returns up to limit bytes of output from offset (all when limit <= 0;
// from the end when offset is negative or past it), the offset to ask from
// next time, and the dropped output the caller passed over, if any. It stops
// before a UTF-8 sequence that is not whole yet, so the next call returns it
// whole instead of losing it.
func (j *JobOutput) Since(offset int64, limit int) (string, int64, Gap) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if offset < 0 || offset > j.total {
		offset = j.total
	}
	kept := j.kept()
	if j.released {
		return "", j.total, Gap{}
	}
	if offset >= kept {
		if offset < j.total {
			return "", j.total, Gap{offset, j.total, j.why}
		}
		return "", offset, Gap{}
	}
	end := kept
	if limit > 0 && end-offset > int64(limit) {
		end = offset + int64(limit)
	}
	b, err := j.read(offset, end)
	if err != nil {
		return "", j.total, Gap{offset, j.total, fmt.Sprintf("the engine could not read its spill file (%v)", err)}
	}
	final := end == kept && j.total > kept // nothing will complete a split character
	if !final {
		b = b[:safetext.WholeRunes(b)]
	}
	next := offset + int64(len(b))
	if final {
		return safetext.Clean(b), j.total, Gap{kept, j.total, j.why}
	}
	return safetext.Clean(b), next, Gap{}
}

// read copies the kept output [from, to). Callers hold mu.
func (j *JobOutput) read(from, to int64) ([]byte, error) {
	b := make([]byte, to-from)
	n := 0
	if from < j.mem.n {
		n = j.mem.copyAt(b, from)
	}
	if n < len(b) {
		m, err := j.file.ReadAt(b[n:], from+int64(n)-j.mem.n)
		if m < len(b)-n {
			return nil, err
		}
	}
	return b, nil
}

// End is the offset after the last byte written, dropped ones included.
func (j *JobOutput) End() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total
}

// Size is the output held, in memory and on disk.
func (j *JobOutput) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.kept()
}

// Release gives the output's memory and spill file back to its budget:
// the job is forgotten, or the call ended without becoming one. Later
// writes are counted and dropped, and Since returns nothing.
func (j *JobOutput) Release() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.released {
		return
	}
	j.released = true
	j.budget.giveMemory(j.charged)
	j.charged = 0
	j.mem.free()
	if j.file != nil {
		j.file.Close()
		os.Remove(j.file.Name())
		j.budget.giveDisk(j.onDisk)
		j.file = nil
	}
	j.onDisk = 0
}
