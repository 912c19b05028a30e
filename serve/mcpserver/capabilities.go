package mcpserver

import (
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/runtime"
)

// Capable is a Backend that says what its container runtime can do
// (*engine.Engine does). New leaves out the tools that need a capability it
// lacks, so a model never sees a tool that could only fail; a Backend that
// does not say gets every tool.
type Capable interface {
	Capabilities() runtime.Capabilities
}

// ToolNeeds is the optional capability of the runtime each tool needs, for
// the tools that need one: the commit's image, and the diff against the
// image the snapshots, forks, diffs and exports are made of.
var ToolNeeds = map[string]runtime.Capability{
	"commit_sandbox":    runtime.CapCommit,
	"snapshot_sandbox":  runtime.CapCommit,
	"restore_sandbox":   runtime.CapCommit,
	"list_snapshots":    runtime.CapCommit,
	"delete_snapshot":   runtime.CapCommit,
	"fork_sandbox":      runtime.CapCommit,
	"diff_sandbox":      runtime.CapCommit,
	"export_dockerfile": runtime.CapCommit,
}

// advertised is set without the tools that need a capability b's runtime
// lacks.
func advertised(b Backend, set []server.ServerTool) []server.ServerTool {
	c, ok := b.(Capable)
	if !ok {
		return set
	}
	caps := c.Capabilities()
	out := set[:0:0]
	for _, t := range set {
		if need, ok := ToolNeeds[t.Tool.Name]; ok && !caps.Has(need) {
			continue
		}
		out = append(out, t)
	}
	return out
}
