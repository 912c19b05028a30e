package jobs

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// New is an engine's jobs table and the budget of their output
// (docs/security.md F32): limits.job_output_memory_bytes in memory, then
// limits.job_output_disk_bytes spilled to the engine's own folder in the
// state dir. Finished jobs keep at most half of both together, so running
// ones always have room.
func New(cfg config.Config) (*Table, *run.Budget) {
	l := cfg.Limits
	budget := run.NewBudget(run.BudgetConfig{Memory: l.JobOutputMemoryBytes, Disk: l.JobOutputDiskBytes,
		StreamFree: l.OutputBytes, Dir: run.SpillDir(cfg.StateDir, sandbox.RandomHex(4))})
	table := NewTable(Limits{PerSandbox: l.MaxJobs, Total: l.MaxJobsTotal,
		FinishedBytes: (l.JobOutputMemoryBytes + l.JobOutputDiskBytes) / 2})
	return table, budget
}

// Host is what the jobs need of the engine.
type Host interface {
	// Record appends a to the activity log of sandbox id.
	Record(id string, a sandbox.Activity)
	// Config is the configuration in force.
	Config() *config.Config
}

// Service is the background jobs as the engine serves them: the table, the
// budget of their output and what started each job, for the app's Jobs
// view. The engine embeds it, so its exported methods are the engine's.
type Service struct {
	host    Host
	table   *Table
	outputs *run.Budget
	log     *slog.Logger

	// The index: the table keeps a job's state and output, this its
	// sandbox's name, tool, command and client. An entry goes when the
	// table has forgotten its job.
	mu   sync.Mutex
	byID map[string]sandbox.JobInfo // guarded by mu; JobStatus holds only ID and SandboxID
}

// NewService returns the jobs of table, whose output outputs holds (see
// New), in the sandboxes of h.
func NewService(table *Table, outputs *run.Budget, h Host, log *slog.Logger) *Service {
	return &Service{host: h, table: table, outputs: outputs, log: log, byID: map[string]sandbox.JobInfo{}}
}

// Execution is a run on its own goroutine: a job, or a call that may become one.
type Execution struct {
	Out     *run.Output
	Cancel  context.CancelFunc
	Started time.Time
	Done    chan struct{} // closed when Res and Err are set
	Res     run.Result
	Err     error
}

// Close forgets every job and removes the spill folder; their runs
// have ended.
func (s *Service) Close() {
	s.table.Close()
	if err := s.outputs.Close(); err != nil {
		s.log.Warn("remove the job-output spill folder", "err", err)
	}
}

// AddJob makes x a job of sandbox id (named name), or says why the limits
// refuse (see Table.Add).
func (s *Service) AddJob(id, name string, x *Execution) (*Job, error) {
	return s.table.Add(id, name, x.Started, x.Out.Combined(), x.Cancel)
}

// StartJob makes x, added as j, a job of sandbox id (named name), started by
// the call act: it owns the sandbox's busy mark until it ends, and calls
// release then; its lifetime is bounded by its timeout, job_stop, deleting
// the sandbox, or the engine's Close (its run derives from the engine's
// base context). The outcome carries the output so far and where
// job_status goes on.
func (s *Service) StartJob(id, name string, act sandbox.Activity, x *Execution, j *Job, release func()) sandbox.ExecOutcome {
	s.note(j.ID(), id, name, act)
	x.Out.StopProgress()
	sofar, offset := x.Out.Snapshot(s.host.Config().Limits.OutputBytes)
	sofar.Duration = time.Since(x.Started)
	started := act
	started.Stdout = "continues in the background as " + j.ID() + "; its result follows when it ends"
	s.host.Record(id, started)
	// The job holds the sandbox (and the engine's wait group, through its
	// acquire) until it has ended and is recorded.
	go func() {
		defer release()
		defer j.End()
		defer x.Cancel()
		<-x.Done
		x.Out.ReleaseStreams() // the result has its copies; the job keeps the combined output
		x.Res.Render()
		s.host.Record(id, x.Res.Activity(act, x.Err))
		s.table.Finish(j, x.Res, x.Err)
	}()
	return sandbox.ExecOutcome{SandboxID: id, JobID: j.ID(), Result: sofar, NextOffset: offset}
}

// JobStatus reports a job's state and its output from offset since.
func (s *Service) JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	return s.table.Status(jobID, since, s.host.Config().Limits.OutputBytes)
}

// JobStop kills a running job's process group and waits for it to end.
func (s *Service) JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error) {
	return s.table.Stop(ctx, jobID, s.host.Config().Limits.OutputBytes)
}

// note records job id, started in sandbox sandboxID (named name) by the
// call act.
func (s *Service) note(id, sandboxID, name string, act sandbox.Activity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[id] = sandbox.JobInfo{JobStatus: sandbox.JobStatus{ID: id, SandboxID: sandboxID}, SandboxName: name,
		Tool: act.Tool, Language: act.Language, Command: act.Input, Client: act.Client}
}

// Jobs lists the background jobs the engine remembers, running and
// finished, newest first: of one sandbox (its id), or of all with "".
// Their output is not included: follow it with JobStatus from offset 0.
func (s *Service) Jobs(sandboxID string) []sandbox.JobInfo {
	s.mu.Lock()
	known := make([]sandbox.JobInfo, 0, len(s.byID))
	for _, j := range s.byID {
		if sandboxID == "" || j.SandboxID == sandboxID {
			known = append(known, j)
		}
	}
	s.mu.Unlock()
	out := known[:0]
	var gone []string
	for _, j := range known {
		st, err := s.table.Status(j.ID, -1, 0)
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
		s.mu.Lock()
		for _, id := range gone {
			delete(s.byID, id)
		}
		s.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b sandbox.JobInfo) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
