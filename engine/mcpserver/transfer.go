package mcpserver

import (
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// copyResult is the result of copy_to_sandbox and copy_from_sandbox.
type copyResult struct {
	Path    string   `json:"path" jsonschema:"The destination: a path in the sandbox or on the host."`
	Files   int      `json:"files" jsonschema:"How many files were copied."`
	Bytes   int64    `json:"bytes" jsonschema:"How many bytes were copied."`
	Skipped []string `json:"skipped,omitempty" jsonschema:"Entries not copied (symlinks, devices), with the reason."`
}

func copyToSandbox(k *toolkit) (mcp.Tool, server.ToolHandlerFunc) {
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
		res, err := k.backend.CopyToSandbox(c.ctx, c.owner, ref, hostPath, dest)
		if err != nil {
			return nil, err
		}
		return copyReply(res), nil
	})
}

func copyFromSandbox(k *toolkit) (mcp.Tool, server.ToolHandlerFunc) {
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
		res, err := k.backend.CopyFromSandbox(c.ctx, c.owner, ref, src, hostPath)
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

// diffResult is diff_sandbox's result.
type diffResult struct {
	Added   []string `json:"added" jsonschema:"Paths created since the sandbox started from its image."`
	Changed []string `json:"changed" jsonschema:"Paths modified."`
	Deleted []string `json:"deleted" jsonschema:"Paths removed."`
}

func diffSandbox(k *toolkit) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("diff_sandbox",
		mcp.WithToolTitle("Show sandbox changes"),
		mcp.WithDescription("List the files added, changed and deleted in a sandbox compared with the image it was created from, "+
			"like docker diff. Narrow it to a directory with path (relative to /workspace unless absolute)."),
		readOnly,
		sandboxArg(),
		mcp.WithString("path", mcp.Description("Only report changes under this path. Default: the whole filesystem.")),
		mcp.WithOutputSchema[diffResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		under := c.string("path")
		if err := c.problem(); err != nil {
			return nil, err
		}
		d, err := k.backend.Diff(c.ctx, c.owner, ref, under)
		if err != nil {
			return nil, err
		}
		out := diffResult{Added: nonNil(d.Added), Changed: nonNil(d.Changed), Deleted: nonNil(d.Deleted)}
		return structured(out, diffText(out)), nil
	})
}

// diffText renders changes as `docker diff` does: A, C or D and the path.
func diffText(d diffResult) string {
	var lines []string
	for _, group := range []struct {
		mark  string
		paths []string
	}{{"A", d.Added}, {"C", d.Changed}, {"D", d.Deleted}} {
		for _, p := range group.paths {
			lines = append(lines, group.mark+" "+p)
		}
	}
	if len(lines) == 0 {
		return "No changes from the image."
	}
	return strings.Join(lines, "\n")
}
