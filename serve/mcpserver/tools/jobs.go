package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Jobs is what job_status and job_stop need from the engine.
type Jobs interface {
	// JobStatus reports a background job and its output from offset since.
	JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error)
	// JobStop kills a background job.
	JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error)
}

// JobTools are job_status and job_stop.
func JobTools(k *Kit, b Jobs) []server.ServerTool {
	return toolSet(k, b, jobStatus, jobStop)
}

// jobResult is the result of job_status and job_stop.
type jobResult struct {
	JobID      string `json:"job_id" jsonschema:"The job id."`
	SandboxID  string `json:"sandbox_id" jsonschema:"The sandbox the job runs in."`
	Status     string `json:"status" jsonschema:"running, exited, stopped, timed_out or failed."`
	Output     string `json:"output" jsonschema:"Combined stdout and stderr from offset since."`
	NextOffset int64  `json:"next_offset" jsonschema:"Pass as since on the next job_status call to get only new output."`
	Dropped    string `json:"output_dropped,omitempty" jsonschema:"Set when output between since and next_offset was not kept: how many bytes, between which offsets, and why."`
	ExitCode   *int   `json:"exit_code,omitempty" jsonschema:"The exit code, once the job has ended."`
	Error      string `json:"error,omitempty" jsonschema:"Why a failed job failed, or what stopped a stopped one other than job_stop (restore_sandbox)."`
	DurationMS int64  `json:"duration_ms" jsonschema:"How long it has run, in milliseconds."`
}

func jobOf(j sandbox.JobStatus) jobResult {
	return jobResult{
		JobID: j.ID, SandboxID: j.SandboxID, Status: j.Status, Output: j.Output, NextOffset: j.NextOffset, Dropped: j.OutputDropped,
		ExitCode: j.ExitCode, Error: j.Error, DurationMS: j.Duration.Milliseconds(),
	}
}

func jobStatus(k *Kit, b Jobs) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("job_status",
		mcp.WithToolTitle("Check background job"),
		mcp.WithDescription("Report a background job started by execute_code or execute_command (with background=true, or a run still going after wait_s): "+
			"whether it is still running, its output, and its exit code once done. "+
			"Pass since=next_offset from the previous call to get only new output. "+
			"Output the engine did not keep (a job keeps at most 8 MiB, and all jobs share one budget) is named in output_dropped."),
		readOnly,
		mcp.WithString("job_id", mcp.Required(), mcp.Description("The job_id the execute call returned.")),
		mcp.WithInteger("since", mcp.Min(0), mcp.DefaultNumber(0),
			mcp.Description("Byte offset into the job's combined output to read from. Default 0: all output.")),
		mcp.WithOutputSchema[jobResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		id := c.required("job_id")
		since := c.integer("since", 0)
		if err := c.problem(); err != nil {
			return nil, err
		}
		j, err := b.JobStatus(c.ctx, id, since)
		if err != nil {
			return nil, err
		}
		return structured(jobOf(j), jobText(j)), nil
	})
}

func jobStop(k *Kit, b Jobs) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("job_stop",
		mcp.WithToolTitle("Stop background job"),
		mcp.WithDescription("Kill a background job and every process it started. Returns its final status and any output not yet read."),
		// Destructive: it kills processes. Idempotent: a stopped job stays stopped.
		hints(false, true, true, false),
		mcp.WithString("job_id", mcp.Required(), mcp.Description("The job_id the execute call returned.")),
		mcp.WithOutputSchema[jobResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		id := c.required("job_id")
		if err := c.problem(); err != nil {
			return nil, err
		}
		j, err := b.JobStop(c.ctx, id)
		if err != nil {
			return nil, err
		}
		return structured(jobOf(j), jobText(j)), nil
	})
}

// jobText renders a job's new output followed by its state.
func jobText(j sandbox.JobStatus) string {
	var b strings.Builder
	writeBlock(&b, j.Output)
	if j.OutputDropped != "" {
		fmt.Fprintf(&b, "[%s]\n", j.OutputDropped)
	}
	switch {
	case j.Status == sandbox.JobRunning:
		fmt.Fprintf(&b, "[job %s running for %s; call job_status with since=%d for new output]", j.ID, formatSeconds(j.Duration), j.NextOffset)
	case j.Status == sandbox.JobFailed:
		fmt.Fprintf(&b, "[job %s failed: %s]", j.ID, j.Error)
	case j.ExitCode != nil:
		fmt.Fprintf(&b, "[job %s %s with code %d after %s]", j.ID, strings.ReplaceAll(j.Status, "_", " "), *j.ExitCode, formatSeconds(j.Duration))
	case j.Error != "":
		fmt.Fprintf(&b, "[job %s %s after %s: %s]", j.ID, strings.ReplaceAll(j.Status, "_", " "), formatSeconds(j.Duration), j.Error)
	default:
		fmt.Fprintf(&b, "[job %s %s after %s]", j.ID, strings.ReplaceAll(j.Status, "_", " "), formatSeconds(j.Duration))
	}
	return b.String()
}
