package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// taskPoll is how often a task follows its job. A job's end is a poll away
// at most, which a client polling tasks/get does not notice.
const taskPoll = 200 * time.Millisecond

// taskOutputCap bounds the output a task's result carries; past it the
// result keeps the end (where the errors are) and links the sandbox's logs.
const taskOutputCap = 64 << 10

// followTask runs an execute call as an MCP task on a Sandtray job: the run
// starts as a background job (so job_status, job_stop and the GUI see it as
// any other), then the task follows it to its end, streaming new output as
// progress when the request asked for it. Cancelling the task (tasks/cancel,
// or its session ending) stops the job.
func followTask(c *call, jobs Jobs, run func(sandbox.Progress) (sandbox.ExecOutcome, error)) (*mcp.CallToolResult, error) {
	outcome, err := run(nil)
	if err != nil {
		return nil, err
	}
	if outcome.JobID == "" {
		return execReply(outcome), nil // done before it could become a job
	}
	progress, done := outputProgress(c)
	defer done()
	out := &tailBuffer{max: taskOutputCap}
	out.WriteString(outcome.Result.Stdout + outcome.Result.Stderr)
	since := outcome.NextOffset
	tick := time.NewTicker(taskPoll)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 10*time.Second)
			defer cancel()
			if _, err := jobs.JobStop(stopCtx, outcome.JobID); err != nil {
				c.k.Log.Warn("stop the job of a cancelled task", "job", outcome.JobID, "err", err)
			}
			return nil, c.ctx.Err()
		case <-tick.C:
		}
		j, err := jobs.JobStatus(c.ctx, outcome.JobID, since)
		if err != nil {
			if c.ctx.Err() != nil {
				continue // cancelled meanwhile: stop the job above
			}
			return nil, err
		}
		since = j.NextOffset
		if j.Output != "" {
			out.WriteString(j.Output)
			if progress != nil {
				progress(float64(since), 0, j.Output)
			}
		}
		if j.Status != sandbox.JobRunning {
			return taskReply(outcome, j, out), nil
		}
	}
}

// taskReply is the result of a task whose job has ended, in execute's shape.
func taskReply(started sandbox.ExecOutcome, j sandbox.JobStatus, out *tailBuffer) *mcp.CallToolResult {
	if j.Status == sandbox.JobFailed {
		return mcp.NewToolResultError(fmt.Sprintf("The run failed: %s", j.Error))
	}
	r := sandbox.ExecResult{
		Stdout: out.String(), Duration: j.Duration,
		TimedOut: j.Status == sandbox.JobTimedOut, Truncated: out.cut,
		KernelRestarted: started.Result.KernelRestarted,
	}
	if j.ExitCode != nil {
		r.ExitCode = *j.ExitCode
	} else {
		r.ExitCode = -1 // stopped before it could exit
	}
	return execReply(sandbox.ExecOutcome{SandboxID: j.SandboxID, Result: r})
}

// logsLink points to a sandbox's activity log, which keeps more output than
// a result carries (a resource_link, MCP 2025-06-18 and later).
func logsLink(sandboxID string) mcp.Content {
	uri := strings.Replace(logsURITemplate, "{id}", sandboxID, 1)
	return mcp.NewResourceLink(uri, "sandbox logs",
		"The sandbox's activity log, with more of the output than this result holds.", jsonMIME)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
	cut bool
}

func (t *tailBuffer) WriteString(s string) {
	t.buf = append(t.buf, s...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
}

func (t *tailBuffer) String() string { return strings.ToValidUTF8(string(t.buf), "") }
