package securitytest

import (
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// TestJobCountIsBounded: background jobs past limits.max_jobs in one
// sandbox, or past limits.max_jobs_total in all, are refused before they
// start, with a sentence naming the key and what to do; a call that
// outlasts wait_s at the limits goes on to its end instead of becoming a
// job; a stopped job makes room (issue 23, item 1; docs/security.md F32).
// Before the fix nothing bounded how many jobs ran.
func TestJobCountIsBounded(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Limits.MaxJobs, c.Limits.MaxJobsTotal = 2, 3 })
	c := e.client
	nameA := "jobs-a-" + randomName()
	a, b := c.sandbox(t, map[string]any{"name": nameA}), c.sandbox(t, nil)
	job := func(box string) string {
		t.Helper()
		r := c.ok(t, "execute_command", map[string]any{"sandbox_id": box, "background": true, "command": "sleep 300"})
		if r.str("job_id") == "" {
			t.Fatalf("no job_id: %s", r.text)
		}
		return r.str("job_id")
	}
	first := job(a)
	job(a)
	c.refused(t, "execute_command", map[string]any{"sandbox_id": a, "background": true, "command": "touch /tmp/third"},
		"sandbox "+nameA+" already runs 2 background jobs (limits.max_jobs)", "job_stop")
	job(b)
	c.refused(t, "execute_code", map[string]any{"sandbox_id": b, "background": true, "code": "print(4)"},
		"already runs 3 background jobs across its sandboxes (limits.max_jobs_total)", "job_stop")
	if out := c.command(t, a, "test -e /tmp/third && echo ran || echo not", 30); strings.TrimSpace(out.stdout) != "not" {
		t.Errorf("a refused job ran anyway")
	}

	// Past wait_s at the limits: the result at the end, not a job.
	r := c.ok(t, "execute_command", map[string]any{"sandbox_id": b, "wait_s": 1, "command": "sleep 3; echo finished"})
	if r.str("job_id") != "" || strings.TrimSpace(r.str("stdout")) != "finished" {
		t.Errorf("a call past wait_s with no room for a job: %s; want it to run to its end in the foreground", r.text)
	}

	if st := c.ok(t, "job_stop", map[string]any{"job_id": first}); st.str("status") != "stopped" {
		t.Fatalf("job_stop: %s", st.text)
	}
	job(b) // room again, in all and in a
	c.refused(t, "execute_command", map[string]any{"sandbox_id": a, "background": true, "command": "echo again"},
		"limits.max_jobs_total")
}
