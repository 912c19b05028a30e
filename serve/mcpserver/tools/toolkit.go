// Package tools is Sandtray's catalog of MCP tools and resources, in sets
// that each declare the small interface they need from the engine:
// Sandboxes (create_sandbox, list_sandboxes), Lifecycle (persist, stop and
// delete), Executor (execute_code, execute_command), Jobs, ActivityLog
// (sandbox_logs), Files, Transfer, Installer, Capture (commit, export,
// diff), Snapshots, Ports, Network (request_network), Secrets, and
// Resources. A set's function (SandboxTools, ExecTools, ...) builds its
// tools for a backend that provides the interface; package mcpserver
// registers every set with the engine.
//
// Each tool has one constructor returning its schema and handler; the
// handlers validate arguments, call the engine, and answer with structured
// content plus a readable text part. Bad input and refused actions are tool
// errors a model can act on (an error for which sandbox.IsUserError is
// true, carrying err.Error()); failures of Docker or the host are Go
// errors, which reach the client as JSON-RPC errors.
//
// The package knows nothing of how messages travel: the transport gives it
// the caller's owner and a task's run context through Kit.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Kit is what every tool set needs besides its backend.
type Kit struct {
	// MaxRequestBytes caps the arguments of one tool call.
	MaxRequestBytes int
	// Languages lists the languages execute_code and create_sandbox accept;
	// LanguageAliases maps other accepted spellings to one of them.
	Languages       []string
	LanguageAliases map[string]string
	// Owner identifies the session of a tool call.
	Owner func(context.Context) sandbox.Owner
	// TaskRun gives a call run as an MCP task the context of its run, and
	// the function to call when it is over; ok is false when the call
	// created no task.
	TaskRun func(ctx context.Context, session string) (run context.Context, done func(), ok bool)
	// Log receives diagnostics; it must not be nil.
	Log *slog.Logger
}

// toolSet builds the tools of one set, each constructor given the set's
// backend.
func toolSet[B any](k *Kit, b B, constructors ...func(*Kit, B) (mcp.Tool, server.ToolHandlerFunc)) []server.ServerTool {
	tools := make([]server.ServerTool, 0, len(constructors))
	for _, build := range constructors {
		tool, handler := build(k, b)
		tools = append(tools, server.ServerTool{Tool: tool, Handler: handler})
	}
	return tools
}

// call is one tool invocation being handled: its context, owner and
// arguments, and the first problem found with them.
type call struct {
	ctx   context.Context
	owner sandbox.Owner
	req   mcp.CallToolRequest
	args  map[string]any
	k     *Kit
	bad   error
}

// handle wraps a tool body with what every tool does: the request-size cap,
// rejecting arguments the tool does not know (a misspelt "timeout" must not
// be silently ignored), resolving the owner, and sorting errors into tool
// errors (the caller can fix them) and Go errors (infrastructure).
func (k *Kit) handle(tool mcp.Tool, body func(*call) (*mcp.CallToolResult, error)) server.ToolHandlerFunc {
	known := slices.Sorted(maps.Keys(tool.InputSchema.Properties))
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if msg := k.oversize(req); msg != "" {
			return mcp.NewToolResultError(msg), nil
		}
		args, ok := req.Params.Arguments.(map[string]any)
		if !ok && req.Params.Arguments != nil {
			return mcp.NewToolResultError("arguments must be a JSON object of named arguments."), nil
		}
		for _, name := range slices.Sorted(maps.Keys(args)) {
			if !slices.Contains(known, name) {
				return mcp.NewToolResultError(unknownArgument(tool.Name, name, known)), nil
			}
		}
		c := &call{ctx: ctx, owner: k.Owner(ctx), req: req, args: args, k: k}
		if c.isTask() {
			if run, done, ok := k.TaskRun(ctx, c.owner.Session); ok {
				c.ctx = run
				defer done()
			}
		}
		result, err := body(c)
		switch {
		case err == nil:
			return result, nil
		case sandbox.IsUserError(err):
			return mcp.NewToolResultError(errorText(err)), nil
		default:
			k.Log.Warn("mcp tool failed", "tool", tool.Name, "session", c.owner.Session, "err", err)
			return nil, fmt.Errorf("%s: %w", tool.Name, err)
		}
	}
}

// errorKinds are the engine's error kinds (engine/sandbox).
var errorKinds = []error{sandbox.ErrNotFound, sandbox.ErrInvalid, sandbox.ErrConflict, sandbox.ErrForbidden,
	sandbox.ErrTooLarge, sandbox.ErrUnsupported, sandbox.ErrUnavailable, sandbox.ErrPaused}

// errorText is a tool error's text for the model: the engine's sentence,
// without the kind its errors end with for errors.Is (": not found",
// ": conflict"), which is Go's plumbing, not words for a model.
func errorText(err error) string {
	msg := err.Error()
	for _, kind := range errorKinds {
		if errors.Is(err, kind) {
			msg = strings.TrimSuffix(msg, ": "+kind.Error())
		}
	}
	return msg
}

func unknownArgument(tool, name string, known []string) string {
	if len(known) == 0 {
		return fmt.Sprintf("%s takes no arguments; call it without %q.", tool, name)
	}
	return fmt.Sprintf("%s has no argument %q; its arguments are: %s.", tool, name, strings.Join(known, ", "))
}

// oversize explains why a call's arguments exceed the cap, naming the
// largest one, or returns "".
func (k *Kit) oversize(req mcp.CallToolRequest) string {
	raw := req.Params.RawArguments
	if raw == nil {
		raw, _ = json.Marshal(req.Params.Arguments)
	}
	if len(raw) <= k.MaxRequestBytes {
		return ""
	}
	biggest, size := "", 0
	if args, ok := req.Params.Arguments.(map[string]any); ok {
		for name, v := range args {
			if s, ok := v.(string); ok && len(s) > size {
				biggest, size = name, len(s)
			}
		}
	}
	what := "This request is " + formatBytes(int64(len(raw)))
	if biggest != "" {
		what = fmt.Sprintf("The %s argument is %s", biggest, formatBytes(int64(size)))
	}
	return overLimit(what, int64(k.MaxRequestBytes))
}

// OversizeRequest is what a request too long to read gets from the
// transport.
func OversizeRequest(size, limit int64) string {
	return overLimit("This request is "+formatBytes(size), limit)
}

// overLimit says that what is over the limit, and how to send less.
func overLimit(what string, limit int64) string {
	return fmt.Sprintf("%s, over the limit of %s per request. "+
		"Send less per call: split file content into several write_file calls, or copy a large file with copy_to_sandbox.",
		what, formatBytes(limit))
}

// badArguments is a problem with a tool's arguments. It is an
// sandbox.ErrInvalid, so it becomes a tool error carrying its message.
type badArguments struct{ msg string }

func (e *badArguments) Error() string        { return e.msg }
func (e *badArguments) Is(target error) bool { return target == sandbox.ErrInvalid }

// fail records a problem with the arguments; the first one wins.
func (c *call) fail(format string, a ...any) {
	if c.bad == nil {
		c.bad = &badArguments{msg: fmt.Sprintf(format, a...)}
	}
}

// problem returns the first recorded problem, or nil.
func (c *call) problem() error { return c.bad }

// requiredHints tell a model where to find a required value it left out.
var requiredHints = map[string]string{
	"sandbox_id": " Pass a sandbox id or name; list_sandboxes shows them.",
	"job_id":     " Pass the job_id an execute call with background=true returned.",
	"path":       " Paths are relative to /workspace unless absolute.",
}

// required returns a string argument that must be present and non-empty.
func (c *call) required(name string) string {
	v, ok := c.args[name]
	if !ok || v == nil {
		c.fail("Missing required argument %q.%s", name, requiredHints[name])
		return ""
	}
	s := c.string(name)
	if s == "" {
		c.fail("Argument %q must not be empty.%s", name, requiredHints[name])
	}
	return s
}

// string returns an optional string argument, "" when absent.
func (c *call) string(name string) string {
	v, ok := c.args[name]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		c.fail("Argument %q must be a string, not %s.", name, describe(v))
	}
	return s
}

// present reports whether an argument was given a value.
func (c *call) present(name string) bool {
	v, ok := c.args[name]
	return ok && v != nil
}

// number returns an optional non-negative number argument.
func (c *call) number(name string, def float64) float64 {
	if !c.present(name) {
		return def
	}
	f, ok := c.args[name].(float64)
	switch {
	case !ok:
		c.fail("Argument %q must be a number, not %s.", name, describe(c.args[name]))
	case f < 0:
		c.fail("Argument %q must not be negative (got %v).", name, f)
	}
	return f
}

// integer returns an optional non-negative whole-number argument.
func (c *call) integer(name string, def int64) int64 {
	if !c.present(name) {
		return def
	}
	f := c.number(name, float64(def))
	if f != float64(int64(f)) {
		c.fail("Argument %q must be a whole number (got %v).", name, f)
	}
	return int64(f)
}

// boolean returns an optional boolean argument.
func (c *call) boolean(name string, def bool) bool {
	if !c.present(name) {
		return def
	}
	b, ok := c.args[name].(bool)
	if !ok {
		c.fail("Argument %q must be true or false, not %s.", name, describe(c.args[name]))
	}
	return b
}

// stringMap returns an optional object argument whose values are strings.
func (c *call) stringMap(name string) map[string]string {
	if !c.present(name) {
		return nil
	}
	obj, ok := c.args[name].(map[string]any)
	if !ok {
		c.fail("Argument %q must be an object mapping names to string values, not %s.", name, describe(c.args[name]))
		return nil
	}
	out := make(map[string]string, len(obj))
	for key, v := range obj {
		s, ok := v.(string)
		if !ok {
			c.fail("%s[%q] must be a string, not %s; quote numbers and booleans.", name, key, describe(v))
			return nil
		}
		out[key] = s
	}
	return out
}

// oneOf returns an optional string argument restricted to choices, def when
// absent. aliases maps accepted spellings to a choice.
func (c *call) oneOf(name, def string, choices []string, aliases map[string]string) string {
	s := strings.ToLower(strings.TrimSpace(c.string(name)))
	if s == "" {
		return def
	}
	if canonical, ok := aliases[s]; ok {
		s = canonical
	}
	if !slices.Contains(choices, s) {
		c.fail("Unknown %s %q; use one of: %s.", name, c.args[name], strings.Join(choices, ", "))
	}
	return s
}

// structured builds a successful result: data as structuredContent and text
// as the readable part.
func structured(data any, text string) *mcp.CallToolResult {
	return mcp.NewToolResultStructured(data, text)
}

// hints sets all four annotations: mcp.NewTool defaults to "destructive,
// open world", so every tool states each hint rather than inherit that.
func hints(readOnly, destructive, idempotent, openWorld bool) mcp.ToolOption {
	return func(t *mcp.Tool) {
		for _, opt := range []mcp.ToolOption{
			mcp.WithReadOnlyHintAnnotation(readOnly),
			mcp.WithDestructiveHintAnnotation(destructive),
			mcp.WithIdempotentHintAnnotation(idempotent),
			mcp.WithOpenWorldHintAnnotation(openWorld),
		} {
			opt(t)
		}
	}
}

// readOnly marks a tool that only looks: it changes nothing, so repeating it
// is harmless.
var readOnly = hints(true, false, true, false)

// sandboxArg is the sandbox_id argument of tools that need a sandbox.
func sandboxArg() mcp.ToolOption {
	return mcp.WithString("sandbox_id", mcp.Required(),
		mcp.Description("The sandbox: its id (or a unique prefix of it) or its name, as create_sandbox or list_sandboxes report."))
}

// isTask reports whether the call runs as an MCP task.
func (c *call) isTask() bool { return c.req.Params.Task != nil }

// taskable marks a tool as one a client may run as a task.
var taskable = mcp.WithTaskSupport(mcp.TaskSupportOptional)
