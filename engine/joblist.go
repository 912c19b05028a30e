package engine

import (
	"cmp"
	"errors"
	"slices"
	"sync"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// jobIndex remembers what started each background job, for the app's Jobs
// view: the jobs table (engine/internal/jobs) keeps a job's state and
// output, this its sandbox's name, tool, command and client. An entry goes
// when the table has forgotten its job.
type jobIndex struct {
	mu   sync.Mutex
	byID map[string]sandbox.JobInfo // guarded by mu; JobStatus holds only ID and SandboxID
}

// noteJob records job id, started in b by the call act.
func (e *Engine) noteJob(id string, b *box, act sandbox.Activity) {
	var name string
	e.locked(func() { name = b.name })
	x := &e.jobInfo
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byID == nil {
		x.byID = map[string]sandbox.JobInfo{}
	}
	x.byID[id] = sandbox.JobInfo{JobStatus: sandbox.JobStatus{ID: id, SandboxID: b.id}, SandboxName: name,
		Tool: act.Tool, Language: act.Language, Command: act.Input, Client: act.Client}
}

// Jobs lists the background jobs the engine remembers, running and
// finished, newest first: of one sandbox (its id), or of all with "".
// Their output is not included: follow it with JobStatus from offset 0.
func (e *Engine) Jobs(sandboxID string) []sandbox.JobInfo {
	x := &e.jobInfo
	x.mu.Lock()
	known := make([]sandbox.JobInfo, 0, len(x.byID))
	for _, j := range x.byID {
		if sandboxID == "" || j.SandboxID == sandboxID {
			known = append(known, j)
		}
	}
	x.mu.Unlock()
	out := known[:0]
	var gone []string
	for _, j := range known {
		st, err := e.jobs.Status(j.ID, -1, 0)
		if errors.Is(err, sandbox.ErrNotFound) {
			gone = append(gone, j.ID)
			continue
		}
		if err != nil {
			continue
		}
		st.Output = ""
		j.JobStatus = st
		out = append(out, j)
	}
	if len(gone) > 0 {
		x.mu.Lock()
		for _, id := range gone {
			delete(x.byID, id)
		}
		x.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b sandbox.JobInfo) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
