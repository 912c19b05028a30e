package jobs

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// add is Add that fails the test on a refusal.
func add(t *testing.T, tab *Table, box string, out *run.JobOutput, cancel context.CancelFunc) *Job {
	t.Helper()
	j, err := tab.Add(box, "sb-"+box, time.Now(), out, cancel)
	if err != nil {
		t.Fatalf("add a job to %s: %v", box, err)
	}
	return j
}

// finish ends j as the engine does.
func finish(tab *Table, j *Job) {
	tab.Finish(j, run.Result{}, nil)
	j.End()
}

// TestStopWaitsForTheRun: job_stop cancels the run, waits until the engine
// says it ended, and reports it stopped with its output; an unknown id is
// ErrNotFound.
func TestStopWaitsForTheRun(t *testing.T) {
	tab := NewTable(Limits{})
	out := run.NewJobOutput(1 << 10)
	out.Write([]byte("so far\n"))
	ctx, cancel := context.WithCancel(context.Background())
	j := add(t, tab, "box", out, cancel)
	go func() { // the engine's side: the run ends when cancelled
		<-ctx.Done()
		finish(tab, j)
	}()
	if st, err := tab.Status(j.ID(), 0, 1<<10); err != nil || st.Status != sandbox.JobRunning || st.Output != "so far\n" {
		t.Fatalf("running: %+v, %v", st, err)
	}
	st, err := tab.Stop(context.Background(), j.ID(), 1<<10)
	if err != nil || st.Status != sandbox.JobStopped || st.SandboxID != "box" || st.ExitCode != nil {
		t.Errorf("stopped: %+v, %v; want stopped with no exit code", st, err)
	}
	if _, err := tab.Status("job-none", 0, 10); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("unknown job: %v, want ErrNotFound", err)
	}
}

// TestEndInSaysWhy: the jobs a restore ends report it (stopped, with the
// reason as their error), those of other sandboxes run on, and job_stop's
// stop says nothing more.
func TestEndInSaysWhy(t *testing.T) {
	tab := NewTable(Limits{})
	start := func(box string) *Job {
		ctx, cancel := context.WithCancel(context.Background())
		j := add(t, tab, box, run.NewJobOutput(10), cancel)
		go func() { // the engine's side: the run ends when cancelled
			<-ctx.Done()
			tab.Finish(j, run.Result{}, ctx.Err())
			j.End()
		}()
		return j
	}
	a, b, other := start("box"), start("box"), start("other")
	if n := tab.EndIn("box", "ended by restore_sandbox (snapshot 0123456789ab)"); n != 2 {
		t.Errorf("EndIn ended %d jobs, want 2", n)
	}
	for _, j := range []*Job{a, b} {
		if st, _ := tab.Status(j.ID(), 0, 10); st.Status != sandbox.JobStopped || st.Error != "ended by restore_sandbox (snapshot 0123456789ab)" {
			t.Errorf("a job the restore ended: %+v", st)
		}
	}
	if st, _ := tab.Status(other.ID(), 0, 10); st.Status != sandbox.JobRunning {
		t.Errorf("another sandbox's job: %+v", st)
	}
	if st, err := tab.Stop(context.Background(), other.ID(), 10); err != nil || st.Status != sandbox.JobStopped || st.Error != "" {
		t.Errorf("a job job_stop stopped: %+v %v", st, err)
	}
}

// TestOutputsInNamesRunningJobsOfOneSandbox: what an install does not wait
// for is exactly the jobs still running in its sandbox.
func TestOutputsInNamesRunningJobsOfOneSandbox(t *testing.T) {
	tab := NewTable(Limits{})
	running, ended, other := run.NewJobOutput(10), run.NewJobOutput(10), run.NewJobOutput(10)
	add(t, tab, "box", running, func() {})
	finish(tab, add(t, tab, "box", ended, func() {}))
	add(t, tab, "other", other, func() {})
	got := tab.OutputsIn("box")
	if len(got) != 1 || !got[running] {
		t.Errorf("OutputsIn(box) = %v; want only the running job's output %p", got, running)
	}
}

// TestJobLimits: a sandbox runs at most PerSandbox jobs and the engine at
// most Total, refused with a sentence naming the key and what to do; a
// job that ends makes room.
func TestJobLimits(t *testing.T) {
	tab := NewTable(Limits{PerSandbox: 2, Total: 3})
	a1 := add(t, tab, "a", run.NewJobOutput(10), func() {})
	add(t, tab, "a", run.NewJobOutput(10), func() {})
	_, err := tab.Add("a", "sb-a", time.Now(), run.NewJobOutput(10), func() {})
	if !errors.Is(err, sandbox.ErrTooLarge) || !strings.Contains(err.Error(), "sandbox sb-a already runs 2 background jobs (limits.max_jobs)") ||
		!strings.Contains(err.Error(), "job_stop") {
		t.Errorf("a third job in one sandbox: %v; want ErrTooLarge naming the sandbox, limits.max_jobs and job_stop", err)
	}
	add(t, tab, "b", run.NewJobOutput(10), func() {})
	_, err = tab.Add("c", "sb-c", time.Now(), run.NewJobOutput(10), func() {})
	if !errors.Is(err, sandbox.ErrTooLarge) || !strings.Contains(err.Error(), "already runs 3 background jobs across its sandboxes (limits.max_jobs_total)") {
		t.Errorf("a fourth job in all: %v; want ErrTooLarge naming limits.max_jobs_total", err)
	}
	finish(tab, a1)
	tab.Finish(a1, run.Result{}, nil) // a second Finish counts nothing twice
	add(t, tab, "a", run.NewJobOutput(10), func() {})
}

// TestFinishedJobsKeptByBytes: finished jobs whose output adds up to more
// than FinishedBytes are forgotten, those that ended first first, and their
// output's budget is given back; the newest finished job always stays.
func TestFinishedJobsKeptByBytes(t *testing.T) {
	budget := run.NewBudget(run.BudgetConfig{Memory: 64 << 20})
	tab := NewTable(Limits{FinishedBytes: 5 << 20})
	mib := bytes.Repeat([]byte("z"), 1<<20)
	var ids []string
	for range 4 {
		o := run.NewOutput(1<<10, budget, nil)
		o.Write(false, mib)
		o.Write(false, mib)
		o.ReleaseStreams()
		j := add(t, tab, "box", o.Combined(), func() {})
		ids = append(ids, j.ID())
		finish(tab, j)
	}
	for i, id := range ids {
		_, err := tab.Status(id, 0, 10)
		if gone := errors.Is(err, sandbox.ErrNotFound); gone != (i < 2) {
			t.Errorf("job %d of 4 (2 MiB each, 5 MiB kept): forgotten = %v, want %v", i+1, gone, i < 2)
		}
	}
	if mem, _ := budget.Used(); mem != 4<<20 {
		t.Errorf("budget in use: %d bytes, want the 2 kept jobs' 4 MiB", mem)
	}
	big := run.NewOutput(1<<10, budget, nil)
	for range 8 {
		big.Write(false, mib)
	}
	big.ReleaseStreams()
	j := add(t, tab, "box", big.Combined(), func() {})
	finish(tab, j)
	if _, err := tab.Status(j.ID(), 0, 10); err != nil {
		t.Errorf("the newest finished job, alone over the bound: %v; want it kept", err)
	}
	if _, err := tab.Status(ids[3], 0, 10); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("older jobs stay while the newest alone is over the bound: %v", err)
	}
	tab.Close()
	if mem, _ := budget.Used(); mem != 0 {
		t.Errorf("after Close: %d bytes of the budget in use", mem)
	}
}

// TestFinishedJobsKeptByCount: past Finished, the jobs that ended first are
// forgotten.
func TestFinishedJobsKeptByCount(t *testing.T) {
	tab := NewTable(Limits{Finished: 3})
	var ids []string
	for range 5 {
		j := add(t, tab, "box", run.NewJobOutput(10), func() {})
		ids = append(ids, j.ID())
		finish(tab, j)
	}
	for i, id := range ids {
		_, err := tab.Status(id, 0, 10)
		if gone := errors.Is(err, sandbox.ErrNotFound); gone != (i < 2) {
			t.Errorf("job %d of 5 (3 kept): forgotten = %v, want %v", i+1, gone, i < 2)
		}
	}
}

// TestStatusNamesDroppedOutput: job_status says how many bytes were
// dropped, between which offsets, and why.
func TestStatusNamesDroppedOutput(t *testing.T) {
	budget := run.NewBudget(run.BudgetConfig{Memory: 4 << 10, StreamFree: 1 << 10})
	tab := NewTable(Limits{})
	o := run.NewOutput(1<<10, budget, nil)
	o.Write(false, bytes.Repeat([]byte("q"), 10000))
	j := add(t, tab, "box", o.Combined(), func() {})
	st, err := tab.Status(j.ID(), 0, 1<<20)
	want := "5904 bytes of output between offsets 4096 and 10000 were dropped: the engine's job-output budget is full"
	if err != nil || len(st.Output) != 4096 || st.NextOffset != 10000 || !strings.HasPrefix(st.OutputDropped, want) {
		t.Errorf("status: %d bytes, next %d, dropped %q, %v; want 4096 bytes, next 10000 and %q", len(st.Output), st.NextOffset, st.OutputDropped, err, want)
	}
	if st, _ := tab.Status(j.ID(), 10000, 1<<20); st.OutputDropped != "" || st.NextOffset != 10000 {
		t.Errorf("from next_offset: %+v; want nothing new", st)
	}
}
