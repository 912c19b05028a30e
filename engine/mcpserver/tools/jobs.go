package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// ActivityLog is what sandbox_logs needs from the engine.
type ActivityLog interface {
	// Logs returns the last tail entries of a sandbox's activity log.
	Logs(ctx context.Context, ref string, tail int) ([]sandbox.Activity, error)
}

// JobTools are job_status and job_stop.
func JobTools(k *Kit, b Jobs) []server.ServerTool {
	return toolSet(k, b, jobStatus, jobStop)
}

// LogTools is sandbox_logs.
func LogTools(k *Kit, b ActivityLog) []server.ServerTool {
	return toolSet(k, b, sandboxLogs)
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
	Error      string `json:"error,omitempty" jsonschema:"Why a failed job failed."`
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
	default:
		fmt.Fprintf(&b, "[job %s %s after %s]", j.ID, strings.ReplaceAll(j.Status, "_", " "), formatSeconds(j.Duration))
	}
	return b.String()
}

// activityEntry is one entry of sandbox_logs.
type activityEntry struct {
	Time       string `json:"time" jsonschema:"When the call was made, RFC 3339."`
	Tool       string `json:"tool" jsonschema:"The tool that was called."`
	Client     string `json:"client,omitempty" jsonschema:"The client that called it."`
	Language   string `json:"language,omitempty" jsonschema:"The language, for execute_code."`
	Input      string `json:"input,omitempty" jsonschema:"The command, code or path, capped."`
	ExitCode   *int   `json:"exit_code,omitempty" jsonschema:"The exit code, for runs."`
	DurationMS int64  `json:"duration_ms" jsonschema:"How long it took, in milliseconds."`
	Stdout     string `json:"stdout,omitempty" jsonschema:"Standard output, capped."`
	Stderr     string `json:"stderr,omitempty" jsonschema:"Standard error, capped."`
	TimedOut   bool   `json:"timed_out,omitempty" jsonschema:"True when it was killed at its timeout."`
	Error      string `json:"error,omitempty" jsonschema:"Why the call failed, if it did."`
	Cut        bool   `json:"cut,omitempty" jsonschema:"True when this entry alone was too big for a reply and its input and output were cut (output keeps its end)."`
}

type activityLog struct {
	Entries  []activityEntry `json:"entries" jsonschema:"Activity entries, oldest first."`
	NextSkip int             `json:"next_skip,omitempty" jsonschema:"Set when older entries were left out (by tail or by the reply's size limit): pass as skip to get the entries before these."`
}

func sandboxLogs(k *Kit, b ActivityLog) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("sandbox_logs",
		mcp.WithToolTitle("Sandbox activity log"),
		mcp.WithDescription("Show a sandbox's activity log: the tool calls that touched it (by any client), with the command or code, "+
			"exit code, duration and output. Output there is kept longer than in execute results, so use it to recover truncated output."),
		readOnly,
		sandboxArg(),
		mcp.WithInteger("tail", mcp.Min(1), mcp.DefaultNumber(20), mcp.Description("How many of the latest entries to return. Default 20. A reply holds at most about 512 KiB; next_skip then pages back.")),
		mcp.WithInteger("skip", mcp.Min(0), mcp.DefaultNumber(0), mcp.Description("Leave out this many of the latest entries: pass the next_skip of the previous reply to page back. Default 0.")),
		mcp.WithOutputSchema[activityLog](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		tail := c.integer("tail", 20)
		if tail == 0 {
			c.fail("Argument \"tail\" must be at least 1.")
		}
		skip := c.integer("skip", 0)
		if err := c.problem(); err != nil {
			return nil, err
		}
		// One entry more than asked for tells whether older ones exist.
		entries, err := b.Logs(c.ctx, ref, int(skip+tail+1))
		if err != nil {
			return nil, err
		}
		out := activityPage(entries, int(skip), int(tail))
		text := activityText(out.Entries)
		if out.NextSkip > 0 {
			text += fmt.Sprintf("\n[older entries left out; call sandbox_logs with skip=%d for the ones before these]", out.NextSkip)
		}
		return structured(out, text), nil
	})
}

// activityPage is sandbox_logs' result, and a sandbox's logs resource: the
// entries that fit in one reply (see pageEntries).
func activityPage(entries []sandbox.Activity, skip, tail int) activityLog {
	page, next := pageEntries(activityOf(entries).Entries, skip, tail)
	return activityLog{Entries: append(make([]activityEntry, 0, len(page)), page...), NextSkip: next}
}

// activityOf is every entry, oldest first.
func activityOf(entries []sandbox.Activity) activityLog {
	out := activityLog{Entries: make([]activityEntry, 0, len(entries))}
	for _, a := range entries {
		out.Entries = append(out.Entries, activityEntry{
			Time: a.Time.UTC().Format(time.RFC3339), Tool: a.Tool, Client: a.Client, Language: a.Language,
			Input: a.Input, ExitCode: a.ExitCode, DurationMS: a.Duration, Stdout: a.Stdout, Stderr: a.Stderr,
			TimedOut: a.TimedOut, Error: a.Error,
		})
	}
	return out
}

// activityText renders the log as a readable transcript.
func activityText(entries []activityEntry) string {
	if len(entries) == 0 {
		return "No activity yet."
	}
	var b strings.Builder
	for i, e := range entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s %s", e.Time, e.Tool)
		if e.Client != "" {
			fmt.Fprintf(&b, " by %s", e.Client)
		}
		switch {
		case e.TimedOut:
			b.WriteString(": timed out")
		case e.Error != "":
			fmt.Fprintf(&b, ": error: %s", e.Error)
		case e.ExitCode != nil:
			fmt.Fprintf(&b, ": exit code %d", *e.ExitCode)
		}
		fmt.Fprintf(&b, " (%s)\n", formatSeconds(time.Duration(e.DurationMS)*time.Millisecond))
		for _, part := range []struct{ label, text string }{{"input", e.Input}, {"stdout", e.Stdout}, {"stderr", e.Stderr}} {
			if part.text != "" {
				fmt.Fprintf(&b, "[%s]\n", part.label)
				writeBlock(&b, part.text)
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
