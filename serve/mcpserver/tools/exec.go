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

// Executor is what execute_code and execute_command need from the engine.
// In both an empty ref means the calling session's default sandbox, which
// the engine creates on first use. A call run as an MCP task follows its
// background job through Jobs.
type Executor interface {
	// ExecCommand runs a shell command; see sandbox.CommandRequest.
	ExecCommand(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommandRequest) (sandbox.ExecOutcome, error)
	// ExecCode runs a code snippet; see sandbox.CodeRequest.
	ExecCode(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CodeRequest) (sandbox.ExecOutcome, error)
	Jobs
}

// ExecTools are execute_code and execute_command.
func ExecTools(k *Kit, b Executor) []server.ServerTool {
	return toolSet(k, b, executeCode, executeCommand)
}

// execResult is the result of execute_code and execute_command.
type execResult struct {
	SandboxID       string      `json:"sandbox_id" jsonschema:"The sandbox it ran in; pass it as sandbox_id to keep working there."`
	Stdout          string      `json:"stdout" jsonschema:"Standard output, capped."`
	Stderr          string      `json:"stderr" jsonschema:"Standard error, capped."`
	ExitCode        *int        `json:"exit_code,omitempty" jsonschema:"The exit code; absent when it was started in the background."`
	DurationMS      int64       `json:"duration_ms" jsonschema:"How long it ran, in milliseconds."`
	TimedOut        bool        `json:"timed_out" jsonschema:"True when it was killed at its timeout."`
	Truncated       bool        `json:"truncated" jsonschema:"True when stdout or stderr was cut at the cap; sandbox_logs keeps more."`
	JobID           string      `json:"job_id,omitempty" jsonschema:"Set when it runs on in the background: poll with job_status, stop with job_stop. stdout and stderr then hold the output so far."`
	NextOffset      int64       `json:"next_offset,omitempty" jsonschema:"With job_id: pass as since to job_status to get only the output after what this result holds."`
	KernelRestarted bool        `json:"kernel_restarted,omitempty" jsonschema:"True when the code ran in a fresh kernel because the previous one had stopped (it exited, or was killed at a timeout): variables and imports from earlier calls are gone."`
	Images          []imageInfo `json:"images,omitempty" jsonschema:"Image files the code wrote to the outputs folder during the call; each one under the size limit is also in the result's content."`
}

// imageInfo describes an image a run wrote.
type imageInfo struct {
	Path     string `json:"path" jsonschema:"Absolute path of the image inside the sandbox."`
	MIMEType string `json:"mime_type" jsonschema:"image/png, image/jpeg, image/gif or image/svg+xml."`
	Size     int64  `json:"size" jsonschema:"The file's size in bytes."`
	Skipped  string `json:"skipped,omitempty" jsonschema:"Why the image is not in the content (over the size limit, unreadable)."`
}

// Argument descriptions shared by both execute tools.
const (
	execSandboxDesc = "The sandbox to run in: its id (or a unique prefix) or its name. " +
		"Optional: without it, this session's default sandbox is used, created on first use and kept for the whole session."
	execTimeoutDesc    = "Seconds to wait before killing it and everything it started. Default: the configured timeout (30 s). Above the configured maximum (10 min by default) is refused: use background for longer work."
	execBackgroundDesc = "Start it as a background job and return a job_id at once instead of waiting. " +
		"Use for servers and long runs; poll output with job_status. Anything a call starts and leaves running (with &, nohup or setsid too) " +
		"is stopped when the call ends; a background job's, when the job ends. The jobs that run at once are limited " +
		"(per sandbox and in all): past the limit this is refused until one ends or is stopped. Default false."
	execWaitDesc = "Seconds to wait for the result. A run still going after that returns its output so far and a job_id, " +
		"and continues as a background job (job_status, job_stop); when no more jobs may run, it goes on until it ends. " +
		"Default 45, at most the maximum timeout."
)

func executeCode(k *Kit, b Executor) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("execute_code",
		mcp.WithToolTitle("Run code"),
		mcp.WithDescription("Run a snippet of code in a sandbox and return its stdout, stderr and exit code. "+
			"python, bash and javascript run in a kernel that lives on between calls, like a notebook: variables, imports and functions carry over "+
			"(for bash also the working directory and exported variables); reset=true starts a fresh one. Other languages run a fresh process each call. "+
			"Files written under /workspace always carry over. "+
			"Images (PNG, JPEG, GIF, SVG) that python, bash or javascript code writes to /workspace/outputs during the call come back as images "+
			"(e.g. matplotlib: plt.savefig('/workspace/outputs/plot.png')). "+
			"Supported languages: "+strings.Join(k.Languages, ", ")+" (default python). "+
			"Without sandbox_id it runs in this session's default sandbox, created on first use (no network). "+
			"Output arrives as progress notifications while it runs when the request has a progress token."),
		// Not destructive: whatever the code does stays inside a disposable
		// sandbox, and marking it destructive would make clients ask before
		// every run, which is the one thing this tool exists to do. Open
		// world: with network "bridge" the code can reach the internet.
		hints(false, false, false, true), taskable, iconRun,
		mcp.WithString("code", mcp.Required(), mcp.Description("The source code to run.")),
		mcp.WithString("language", mcp.Enum(k.Languages...), mcp.DefaultString("python"),
			mcp.Description("The language of code. Default python.")),
		mcp.WithString("sandbox_id", mcp.Description(execSandboxDesc)),
		mcp.WithNumber("timeout_s", mcp.Min(0), mcp.Description(execTimeoutDesc+
			" On a kernel, the code is interrupted first (Python gets KeyboardInterrupt and the kernel keeps its state); "+
			"if it does not stop within 2 s, the kernel is killed and its state is lost.")),
		mcp.WithBoolean("reset", mcp.DefaultBool(false),
			mcp.Description("Start a fresh kernel for this language, dropping the variables, imports and functions of earlier calls. Default false.")),
		mcp.WithNumber("wait_s", mcp.Min(0), mcp.Description(execWaitDesc)),
		mcp.WithBoolean("background", mcp.DefaultBool(false), mcp.Description(execBackgroundDesc)),
		mcp.WithOutputSchema[execResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		req := sandbox.CodeRequest{
			Code:       c.required("code"),
			Language:   c.language(),
			Timeout:    c.seconds("timeout_s"),
			Background: c.boolean("background", false) || c.isTask(),
			Reset:      c.boolean("reset", false),
			Wait:       c.seconds("wait_s"),
		}
		ref := c.string("sandbox_id")
		return runExec(c, b, func(progress sandbox.Progress) (sandbox.ExecOutcome, error) {
			req.Progress = progress
			return b.ExecCode(c.ctx, c.owner, ref, req)
		})
	})
}

func executeCommand(k *Kit, b Executor) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("execute_command",
		mcp.WithToolTitle("Run shell command"),
		mcp.WithDescription("Run a shell command (via /bin/sh -c, so pipes and && work) in a sandbox and return its stdout, stderr and exit code. "+
			"Use it to install packages, run tests, inspect files, or start programs. "+
			"Without sandbox_id it runs in this session's default sandbox, created on first use (no network). "+
			"The working directory is /workspace unless workdir says otherwise. Each call is a fresh shell: for a shell whose cd and exports carry over, use execute_code with language bash. "+
			"Output arrives as progress notifications while it runs when the request has a progress token."),
		// Not destructive, for the same reason as execute_code: its effects
		// stay inside a disposable sandbox.
		hints(false, false, false, true), taskable, iconRun,
		mcp.WithString("command", mcp.Required(), mcp.Description("The shell command line, e.g. \"ls -la && python3 main.py\".")),
		mcp.WithString("sandbox_id", mcp.Description(execSandboxDesc)),
		mcp.WithString("workdir", mcp.Description("Directory to run in, relative to /workspace unless absolute. Default /workspace.")),
		mcp.WithObject("env", mcp.AdditionalProperties(map[string]any{"type": "string"}),
			mcp.Description("Extra environment variables for this command, e.g. {\"DEBUG\": \"1\"}. Names starting with NVIDIA_ or LD_ are refused: set those in the command itself.")),
		mcp.WithString("stdin", mcp.Description("Text to feed to the command's standard input. Default: none.")),
		mcp.WithNumber("timeout_s", mcp.Min(0), mcp.Description(execTimeoutDesc)),
		mcp.WithNumber("wait_s", mcp.Min(0), mcp.Description(execWaitDesc)),
		mcp.WithBoolean("background", mcp.DefaultBool(false), mcp.Description(execBackgroundDesc)),
		mcp.WithOutputSchema[execResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		req := sandbox.CommandRequest{
			Command:    c.required("command"),
			Workdir:    c.string("workdir"),
			Env:        c.stringMap("env"),
			Stdin:      c.string("stdin"),
			Timeout:    c.seconds("timeout_s"),
			Background: c.boolean("background", false) || c.isTask(),
			Wait:       c.seconds("wait_s"),
		}
		ref := c.string("sandbox_id")
		return runExec(c, b, func(progress sandbox.Progress) (sandbox.ExecOutcome, error) {
			req.Progress = progress
			return b.ExecCommand(c.ctx, c.owner, ref, req)
		})
	})
}

// runExec checks the call's arguments, runs it with its output streamed as
// progress, and builds the reply.
func runExec(c *call, jobs Jobs, run func(sandbox.Progress) (sandbox.ExecOutcome, error)) (*mcp.CallToolResult, error) {
	if err := c.problem(); err != nil {
		return nil, err
	}
	if c.isTask() {
		return followTask(c, jobs, run) // see tasks_exec.go
	}
	progress, done := outputProgress(c)
	defer done()
	outcome, err := run(progress)
	if err != nil {
		return nil, err
	}
	return execReply(outcome), nil
}

// seconds returns an optional non-negative duration argument given in seconds.
func (c *call) seconds(name string) time.Duration {
	return time.Duration(c.number(name, 0) * float64(time.Second))
}

func execReply(o sandbox.ExecOutcome) *mcp.CallToolResult {
	r := o.Result
	out := execResult{
		SandboxID: o.SandboxID, Stdout: r.Stdout, Stderr: r.Stderr,
		DurationMS: r.Duration.Milliseconds(), TimedOut: r.TimedOut, Truncated: r.Truncated, JobID: o.JobID,
		NextOffset: o.NextOffset, KernelRestarted: r.KernelRestarted,
	}
	if o.JobID != "" {
		return structured(out, jobStartText(o))
	}
	out.ExitCode = &r.ExitCode
	for _, img := range r.Images {
		out.Images = append(out.Images, imageInfo{Path: img.Path, MIMEType: img.MIME, Size: img.Size, Skipped: img.Skipped})
	}
	res := structured(out, execText(r))
	res.Content = append(res.Content, imageContents(r.Images)...)
	if r.Truncated && o.SandboxID != "" {
		res.Content = append(res.Content, logsLink(o.SandboxID))
	}
	return res
}

// jobStartText says that a run continues as a job, with its output so far.
func jobStartText(o sandbox.ExecOutcome) string {
	r := o.Result
	if r.Stdout == "" && r.Stderr == "" && o.NextOffset == 0 {
		return fmt.Sprintf("Started background job %s in sandbox %s.\nRead its output with job_status (job_id %q); stop it with job_stop.",
			o.JobID, shortID(o.SandboxID), o.JobID)
	}
	var b strings.Builder
	writeBlock(&b, r.Stdout)
	if r.Stderr != "" {
		b.WriteString("[stderr]\n")
		writeBlock(&b, r.Stderr)
	}
	fmt.Fprintf(&b, "[still running after %s; it continues as background job %s in sandbox %s. "+
		"For the output after this, call job_status with job_id %q and since=%d; stop it with job_stop]",
		formatSeconds(r.Duration), o.JobID, shortID(o.SandboxID), o.JobID, o.NextOffset)
	return b.String()
}

// execText renders a run the way a terminal would show it: stdout, then
// stderr under a marker, then how it ended.
func execText(r sandbox.ExecResult) string {
	var b strings.Builder
	writeBlock(&b, r.Stdout)
	if r.Stderr != "" {
		b.WriteString("[stderr]\n")
		writeBlock(&b, r.Stderr)
	}
	if r.Stdout == "" && r.Stderr == "" {
		b.WriteString("(no output)\n")
	}
	if r.TimedOut {
		fmt.Fprintf(&b, "[timed out after %s; it was killed with everything it started]", formatSeconds(r.Duration))
	} else {
		fmt.Fprintf(&b, "[exit code %d after %s]", r.ExitCode, formatSeconds(r.Duration))
	}
	if r.Truncated {
		b.WriteString("\n[output truncated; sandbox_logs keeps more]")
	}
	if r.KernelRestarted {
		b.WriteString("\n[this ran in a fresh kernel: the previous one had stopped, so variables and imports from earlier calls are gone]")
	}
	for _, img := range r.Images {
		if img.Skipped != "" {
			fmt.Fprintf(&b, "\n[image %s (%s) not included: %s]", img.Path, formatBytes(img.Size), img.Skipped)
		} else {
			fmt.Fprintf(&b, "\n[image %s (%s, %s) follows]", img.Path, img.MIME, formatBytes(img.Size))
		}
	}
	return b.String()
}
