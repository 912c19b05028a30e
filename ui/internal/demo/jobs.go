package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// demoJobs are background jobs for the Jobs view: a web server that logs a
// request every second until stopped, and two that have ended.
type demoJobs struct {
	mu      sync.Mutex
	start   time.Time
	stopped time.Time // when Stop ended the server; zero while it runs
	boxes   func() []sandbox.Info
}

func newDemoJobs(boxes func() []sandbox.Info) *demoJobs {
	return &demoJobs{start: time.Now().Add(-47 * time.Second), boxes: boxes}
}

// serverOutput is what the server has printed by now.
func (d *demoJobs) serverOutput(now time.Time) string {
	var b strings.Builder
	b.WriteString("Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...\n")
	paths := []string{"/", "/static/app.js", "/static/style.css", "/api/sales?region=east", "/api/sales?region=west", "/favicon.ico"}
	for i := 0; i < int(now.Sub(d.start).Seconds()); i++ {
		at := d.start.Add(time.Duration(i) * time.Second)
		code := 200
		if paths[i%len(paths)] == "/favicon.ico" {
			code = 404
		}
		fmt.Fprintf(&b, "127.0.0.1 - - [%s] \"GET %s HTTP/1.1\" %d -\n", at.Format("02/Jan/2006 15:04:05"), paths[i%len(paths)], code)
	}
	return b.String()
}

func (d *demoJobs) list() []sandbox.JobInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	boxes := d.boxes()
	if len(boxes) < 3 {
		return nil
	}
	code := func(c int) *int { return &c }
	server := sandbox.JobInfo{JobStatus: sandbox.JobStatus{ID: "job-5f1c9a", SandboxID: boxes[0].ID, Status: sandbox.JobRunning,
		Started: d.start, Duration: now.Sub(d.start)}, SandboxName: boxes[0].Name, Tool: "execute_command",
		Command: "cd site && python3 -m http.server 8000", Client: boxes[0].Owner.Client}
	if !d.stopped.IsZero() {
		server.Status, server.Duration = sandbox.JobStopped, d.stopped.Sub(d.start)
	}
	return []sandbox.JobInfo{
		server,
		{JobStatus: sandbox.JobStatus{ID: "job-0b77e2", SandboxID: boxes[0].ID, Status: sandbox.JobExited, ExitCode: code(0),
			Started: now.Add(-3 * time.Minute), Duration: 73 * time.Second}, SandboxName: boxes[0].Name, Tool: "execute_code",
			Language: "python", Command: "import pandas as pd\ndf = pd.read_csv('data/sales.csv')", Client: boxes[0].Owner.Client},
		{JobStatus: sandbox.JobStatus{ID: "job-c41d3f", SandboxID: boxes[2].ID, Status: sandbox.JobExited, ExitCode: code(1),
			Started: now.Add(-11 * time.Minute), Duration: 4*time.Minute + 12*time.Second}, SandboxName: boxes[2].Name,
			Tool: "execute_command", Command: "npm run build", Client: boxes[2].Owner.Client},
	}
}

func (f *fakeBackend) Jobs(sandboxID string) []sandbox.JobInfo {
	var out []sandbox.JobInfo
	for _, j := range f.jobs.list() {
		if sandboxID == "" || j.SandboxID == sandboxID {
			out = append(out, j)
		}
	}
	return out
}

func (f *fakeBackend) JobStatus(_ context.Context, id string, since int64) (sandbox.JobStatus, error) {
	for _, j := range f.jobs.list() {
		if j.ID != id {
			continue
		}
		out := "vite v5.4.8 building for production...\nerror during build:\nsrc/main.ts(3,8): Cannot find module './chart'\n"
		switch id {
		case "job-5f1c9a":
			f.jobs.mu.Lock()
			end := time.Now()
			if !f.jobs.stopped.IsZero() {
				end = f.jobs.stopped
			}
			out = f.jobs.serverOutput(end)
			f.jobs.mu.Unlock()
		case "job-0b77e2":
			out = "rows: 48213\nregions: 4\nwrote out/summary.png\n"
		}
		st := j.JobStatus
		if since < 0 || since > int64(len(out)) {
			since = int64(len(out))
		}
		st.Output, st.NextOffset = out[since:], int64(len(out))
		return st, nil
	}
	return sandbox.JobStatus{}, fmt.Errorf("no job %q: %w", id, sandbox.ErrNotFound)
}

func (f *fakeBackend) JobStop(ctx context.Context, id string) (sandbox.JobStatus, error) {
	if id == "job-5f1c9a" {
		f.jobs.mu.Lock()
		if f.jobs.stopped.IsZero() {
			f.jobs.stopped = time.Now()
		}
		f.jobs.mu.Unlock()
	}
	return f.JobStatus(ctx, id, -1)
}
