package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func exitCode(c int) *int { return &c }

// jobsFixture: a server running in alpha, a finished job in alpha, and one
// in gamma.
func jobsFixture(h *harness) {
	h.b.jobs = []sandbox.JobInfo{
		{JobStatus: sandbox.JobStatus{ID: "job-serve", SandboxID: alpha.ID, Status: sandbox.JobRunning, Started: t0.Add(-90 * time.Second), Duration: 90 * time.Second},
			SandboxName: "alpha", Tool: "execute_command", Command: "python -m http.server 8000", Client: "claude-ai 0.1.0"},
		{JobStatus: sandbox.JobStatus{ID: "job-build", SandboxID: alpha.ID, Status: sandbox.JobExited, ExitCode: exitCode(2), Started: t0.Add(-5 * time.Minute), Duration: 42 * time.Second},
			SandboxName: "alpha", Tool: "execute_command", Command: "make all\necho done", Client: "claude-ai 0.1.0"},
		{JobStatus: sandbox.JobStatus{ID: "job-other", SandboxID: gamma.ID, Status: sandbox.JobRunning, Started: t0.Add(-10 * time.Second), Duration: 10 * time.Second},
			SandboxName: "gamma", Tool: "execute_code", Language: "python", Command: "train()", Client: "Claude Code 2.0"},
	}
	h.b.jobOut = map[string][]string{"job-serve": {"Serving HTTP on 0.0.0.0 port 8000\n", "GET / 200\n"}}
}

// TestJobsTabFollowsOutputAndStops: the Jobs tab lists the selected
// sandbox's jobs, newest first and chosen; its output follows with
// job_status's offsets while it runs (at once while output comes, then
// every jobPoll); Stop ends it with job_stop and says so in green.
func TestJobsTabFollowsOutputAndStops(t *testing.T) {
	h := selected(t, alpha)
	jobsFixture(h)
	h.b.taken()
	selectTab(h, "Jobs")
	v := h.u.detail.jobs
	if len(v.jobs) != 2 || v.chosen != "job-serve" {
		t.Fatalf("the tab lists %d jobs, chose %q; want alpha's 2, the running one chosen", len(v.jobs), v.chosen)
	}
	h.fire(0) // output came: read on at once
	h.fire(0)
	if got, want := v.output.text.Text, "Serving HTTP on 0.0.0.0 port 8000\nGET / 200\n"; got != want {
		t.Errorf("output %q; want %q", got, want)
	}
	h.b.jobOut["job-serve"] = []string{"GET /favicon.ico 404\n"}
	h.fire(jobPoll)
	if got := v.output.text.Text; got != "Serving HTTP on 0.0.0.0 port 8000\nGET / 200\nGET /favicon.ico 404\n" {
		t.Errorf("output after a poll %q", got)
	}
	want := []string{"JobStatus(job-serve, 0)", "JobStatus(job-serve, 34)", "JobStatus(job-serve, 44)", "JobStatus(job-serve, 44)"}
	if diff := cmp.Diff(want, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if v.stop.Disabled() {
		t.Fatal("Stop is disabled for a running job")
	}
	test.Tap(v.stop)
	h.flush()
	if calls := h.b.taken(); len(calls) == 0 || calls[0] != "JobStop(job-serve)" {
		t.Errorf("Stop called %v", calls)
	}
	if m := v.message.label; m.Text != "Stopped job-serve." || m.Importance != widget.SuccessImportance {
		t.Errorf("after Stop: %q (importance %d)", m.Text, m.Importance)
	}
	if !v.stop.Disabled() || v.state.Text[:7] != "Stopped" {
		t.Errorf("a stopped job: Stop enabled %t, state %q", !v.stop.Disabled(), v.state.Text)
	}
	h.fire(messageLife)
	if v.message.label.Visible() {
		t.Error("the message stayed after it went stale")
	}
	h.b.taken()

	// Choosing the finished job shows its state; nothing more is polled.
	v.list.Select(1)
	h.flush()
	if v.state.Text != "Exited · started 09:21:53 · 42.0 s · exit 2 · job-build" || v.state.Importance != widget.DangerImportance {
		t.Errorf("finished job's state %q (importance %d)", v.state.Text, v.state.Importance)
	}
	h.fire(time.Hour)
	if calls := h.b.taken(); !cmp.Equal(calls, []string{"JobStatus(job-build, 0)"}) {
		t.Errorf("choosing a finished job called %v; want its output read once", calls)
	}
}

// TestJobsWindowListsEverySandbox: Background jobs… lists the jobs of all
// sandboxes, with a Sandbox column.
func TestJobsWindowListsEverySandbox(t *testing.T) {
	h := newHarness(t)
	jobsFixture(h)
	h.feed(snapshot(alpha, beta, gamma))
	var open *fyne.MenuItem
	for _, item := range h.u.win.MainMenu().Items[0].Items {
		if item.Label == "Background jobs…" {
			open = item
		}
	}
	if open == nil {
		t.Fatal("no Background jobs… in the Sandtray menu")
	}
	open.Action()
	h.flush()
	v := h.u.jobsWin.view
	if len(v.jobs) != 3 || len(v.cols) != 6 {
		t.Fatalf("the window lists %d jobs in %d columns; want 3 in 6", len(v.jobs), len(v.cols))
	}
	if got := JobRowTexts(v.jobs[2], t0); !cmp.Equal(got, []string{"Running", "train()", "gamma", "09:26:43", "10.0 s", "—"}) {
		t.Errorf("gamma's job row %v", got)
	}
	if got := JobRowTexts(v.jobs[1], t0); got[1] != "make all" || got[5] != "2" {
		t.Errorf("a multi-line command's row %v; want its first line and exit 2", got)
	}
	// Close hides the window and stops following its jobs' output.
	test.Tap(button(t, h.u.jobsWin.win.Content(), "Close"))
	h.flush()
	if v.shown {
		t.Error("the Jobs window still follows its jobs after Close")
	}
	h.b.taken()
	h.fire(jobPoll)
	if calls := h.b.taken(); len(calls) != 0 {
		t.Errorf("the closed Jobs window still reads output: %v", calls)
	}
}

func TestGoldenJobs(t *testing.T) {
	h := goldenHarness(t)
	jobsFixture(h)
	selectTab(h, "Jobs")
	h.fire(0)
	h.fire(0)
	assertMarkup(t, "jobs.xml", h.u.win.Canvas())
}
