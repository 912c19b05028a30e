package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestJobsListsWhatRunsAndWhatEnded: the app's Jobs view sees a background
// job with its sandbox, command and client while it runs and after job_stop
// ends it, newest first, and only its own sandbox's jobs when it asks.
func TestJobsListsWhatRunsAndWhatEnded(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	a := te.create(t, sandbox.CreateRequest{Name: "jobs-a"})
	b := te.create(t, sandbox.CreateRequest{Name: "jobs-b"})
	first, err := te.ExecCommand(ctx, te.owner, a.ID, sandbox.CommandRequest{Command: "echo done", Background: true})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the first job did not end", func() bool {
		st, _ := te.JobStatus(ctx, first.JobID, 0)
		return st.Status == sandbox.JobExited
	})
	long, err := te.ExecCommand(ctx, te.owner, a.ID, sandbox.CommandRequest{Command: "echo serving; sleep 301", Background: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := te.ExecCommand(ctx, te.owner, b.ID, sandbox.CommandRequest{Command: "sleep 302", Background: true})
	if err != nil {
		t.Fatal(err)
	}
	jobs := te.Jobs(a.ID)
	if len(jobs) != 2 || jobs[0].ID != long.JobID || jobs[1].ID != first.JobID {
		t.Fatalf("jobs of %s: %+v; want the long job, then the first", a.Name, jobs)
	}
	j := jobs[0]
	if j.Status != sandbox.JobRunning || j.SandboxName != "jobs-a" || j.Command != "echo serving; sleep 301" ||
		j.Tool != "execute_command" || j.Client != te.owner.Client || j.Output != "" {
		t.Errorf("running job listed as %+v", j)
	}
	if jobs[1].ExitCode == nil || *jobs[1].ExitCode != 0 {
		t.Errorf("finished job listed as %+v; want exit 0", jobs[1])
	}
	if all := te.Jobs(""); len(all) != 3 || all[0].ID != other.JobID {
		t.Errorf("all jobs: %d, newest %v; want 3, newest %s", len(all), all, other.JobID)
	}
	eventually(t, 10*time.Second, "the running job's output did not follow from offset 0", func() bool {
		st, err := te.JobStatus(ctx, long.JobID, 0)
		return err == nil && strings.HasPrefix(st.Output, "serving")
	})
	for _, id := range []string{long.JobID, other.JobID} {
		if _, err := te.JobStop(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if jobs := te.Jobs(a.ID); jobs[0].Status != sandbox.JobStopped {
		t.Errorf("stopped job listed as %+v", jobs[0])
	}
}
