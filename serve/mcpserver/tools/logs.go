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

// ActivityLog is what sandbox_logs needs from the engine.
type ActivityLog interface {
	// Logs returns the last tail entries of a sandbox's activity log.
	Logs(ctx context.Context, ref string, tail int) ([]sandbox.Activity, error)
}

// LogTools is sandbox_logs.
func LogTools(k *Kit, b ActivityLog) []server.ServerTool {
	return toolSet(k, b, sandboxLogs)
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
