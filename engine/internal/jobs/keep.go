package jobs

import (
	"slices"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// trimLocked forgets the finished jobs that ended longest ago while more
// than Limits.Finished have finished, or while their kept output adds up
// to more than Limits.FinishedBytes; the newest finished job always stays,
// so the model can read how the job it waited for ended. It returns the
// forgotten jobs' outputs, for the caller to release outside t.mu.
func (t *Table) trimLocked() []*run.JobOutput {
	var finished []*Job
	var size int64
	for _, j := range t.byID {
		if j.status != sandbox.JobRunning {
			finished = append(finished, j)
			size += j.output.Size()
		}
	}
	slices.SortFunc(finished, func(a, b *Job) int { return a.ended.Compare(b.ended) })
	var out []*run.JobOutput
	for len(finished) > 1 && (len(finished) > t.limits.Finished || t.limits.FinishedBytes > 0 && size > t.limits.FinishedBytes) {
		j := finished[0]
		finished = finished[1:]
		size -= j.output.Size()
		delete(t.byID, j.id)
		out = append(out, j.output)
	}
	return out
}

// Close forgets every job and releases its output: the engine is closing,
// and its jobs' runs have ended.
func (t *Table) Close() {
	t.mu.Lock()
	var outs []*run.JobOutput
	for id, j := range t.byID {
		outs = append(outs, j.output)
		delete(t.byID, id)
	}
	t.mu.Unlock()
	for _, o := range outs {
		o.Release()
	}
}
