package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Transfer is what copy_to_sandbox and copy_from_sandbox need from the
// engine.
type Transfer interface {
	// CopyToSandbox copies a host file or directory into a sandbox.
	CopyToSandbox(ctx context.Context, owner sandbox.Owner, ref, hostPath, path string) (sandbox.CopyResult, error)
	// CopyFromSandbox copies a sandbox file or directory to the host.
	CopyFromSandbox(ctx context.Context, owner sandbox.Owner, ref, path, hostPath string) (sandbox.CopyResult, error)
}

// TransferTools are copy_to_sandbox and copy_from_sandbox.
func TransferTools(k *Kit, b Transfer) []server.ServerTool {
	return toolSet(k, b, copyToSandbox, copyFromSandbox)
}

// copyResult is the result of copy_to_sandbox and copy_from_sandbox.
type copyResult struct {
	Path    string   `json:"path" jsonschema:"The destination: a path in the sandbox or on the host."`
	Files   int      `json:"files" jsonschema:"How many files were copied."`
	Bytes   int64    `json:"bytes" jsonschema:"How many bytes were copied."`
	Skipped []string `json:"skipped,omitempty" jsonschema:"Entries not copied (symlinks, devices), with the reason."`
}

func copyToSandbox(k *Kit, b Transfer) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("copy_to_sandbox",
		mcp.WithToolTitle("Copy from host into sandbox"),
		mcp.WithDescription("Copy a file or directory from the user's machine into a sandbox. "+
			"host_path must lie under a directory the user allowed in Sandtray's settings; others are refused. "+
			"The destination path is relative to /workspace unless absolute; default /workspace. Existing files there are overwritten. "+
			"A copy may hold at most limits.max_copy_bytes (default 1 GiB) and limits.max_copy_files (default 100000) files and folders; a larger one is refused before anything is copied."),
		// Destructive: it overwrites files in the sandbox.
		hints(false, true, true, false),
		sandboxArg(),
		mcp.WithString("host_path", mcp.Required(), mcp.Description("Absolute path of the file or directory on the user's machine.")),
		mcp.WithString("path", mcp.Description("Destination in the sandbox, relative to /workspace unless absolute. Default /workspace.")),
		mcp.WithOutputSchema[copyResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		hostPath := c.required("host_path")
		dest := c.string("path")
		if err := c.problem(); err != nil {
			return nil, err
		}
		res, err := b.CopyToSandbox(c.ctx, c.owner, ref, hostPath, dest)
		if err != nil {
			return nil, err
		}
		return copyReply(res), nil
	})
}

func copyFromSandbox(k *Kit, b Transfer) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("copy_from_sandbox",
		mcp.WithToolTitle("Copy from sandbox to host"),
		mcp.WithDescription("Copy a file or directory out of a sandbox onto the user's machine. "+
			"path is relative to /workspace unless absolute. host_path must lie under a directory the user allowed in Sandtray's settings. "+
			"Nothing on the host is ever overwritten: host_path must not exist yet, or be an existing folder, which receives the copy under its own name. "+
			"Symlinks from the sandbox are never followed or written; sparse files stay sparse. "+
			"A copy may hold at most limits.max_copy_bytes (default 1 GiB) and limits.max_copy_files (default 100000) files and folders, and must leave 256 MiB free on the host; a larger one is refused and leaves nothing behind."),
		// Destructive: it writes to the user's machine (new files only, never
		// over one), so clients should still ask before it runs.
		hints(false, true, true, false),
		sandboxArg(),
		mcp.WithString("path", mcp.Required(), mcp.Description("File or directory in the sandbox, relative to /workspace unless absolute.")),
		mcp.WithString("host_path", mcp.Required(), mcp.Description("Absolute destination path on the user's machine.")),
		mcp.WithOutputSchema[copyResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		src := c.required("path")
		hostPath := c.required("host_path")
		if err := c.problem(); err != nil {
			return nil, err
		}
		res, err := b.CopyFromSandbox(c.ctx, c.owner, ref, src, hostPath)
		if err != nil {
			return nil, err
		}
		return copyReply(res), nil
	})
}

func copyReply(res sandbox.CopyResult) *mcp.CallToolResult {
	out := copyResult{Path: res.Path, Files: res.Files, Bytes: res.Bytes, Skipped: res.Skipped}
	text := fmt.Sprintf("Copied %d %s (%s) to %s.", res.Files, plural(res.Files, "file", "files"), formatBytes(res.Bytes), res.Path)
	if len(res.Skipped) > 0 {
		text += "\nSkipped:\n  " + strings.Join(res.Skipped, "\n  ")
	}
	return structured(out, text)
}
