package tools

import (
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Snapshots is what the snapshot tools need from the engine: the interface
// the GUI's Snapshots tab shares.
type Snapshots = sandbox.Snapshots

// SnapshotTools are snapshot_sandbox, list_snapshots, delete_snapshot,
// restore_sandbox and fork_sandbox.
func SnapshotTools(k *Kit, b Snapshots) []server.ServerTool {
	return toolSet(k, b, snapshotSandbox, listSnapshots, deleteSnapshot, restoreSandbox, forkSandbox)
}

func snapshotArg() mcp.ToolOption {
	return mcp.WithString("snapshot_id", mcp.Required(),
		mcp.Description("The snapshot's id, as snapshot_sandbox or list_snapshots gave it."))
}

// snapshotList is list_snapshots' result.
type snapshotList struct {
	SandboxID string                 `json:"sandbox_id"`
	Snapshots []sandbox.SnapshotInfo `json:"snapshots" jsonschema:"Oldest first."`
}

type snapshotDeleted struct {
	SandboxID  string `json:"sandbox_id"`
	SnapshotID string `json:"snapshot_id"`
	Deleted    bool   `json:"deleted"`
}

type forkList struct {
	Sandboxes []sandbox.Fork `json:"sandboxes" jsonschema:"The new sandboxes; use their sandbox_id with every tool."`
}

func snapshotLine(s sandbox.SnapshotInfo) string {
	label := ""
	if s.Label != "" {
		label = fmt.Sprintf(" %q", s.Label)
	}
	return fmt.Sprintf("%s%s, %s, taken %s", s.ID, label, formatBytes(s.SizeBytes), s.Created.UTC().Format(time.RFC3339))
}

func snapshotSandbox(k *Kit, s Snapshots) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("snapshot_sandbox",
		mcp.WithToolTitle("Snapshot sandbox"),
		mcp.WithDescription("Save a sandbox's files as they are now (everything it changed, packages included, and its workdir), to go back to later with restore_sandbox. "+
			"Calls wait while it is taken and background jobs are frozen, so the snapshot is consistent. Running processes and kernel variables are not saved. "+
			"A sandbox keeps at most limits.max_snapshots snapshots; they are removed with the sandbox."),
		hints(false, false, false, false),
		sandboxArg(),
		mcp.WithString("label", mcp.Description("A note to recognise it by, e.g. \"before the upgrade\". Only a note: the snapshot's name is Sandtray's own.")),
		mcp.WithBoolean("live", mcp.DefaultBool(false),
			mcp.Description("Also keep running processes and their memory (CRIU). Not available on most machines: the error says what is missing.")),
		mcp.WithOutputSchema[sandbox.SnapshotInfo](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		req := sandbox.SnapshotRequest{Label: c.string("label"), Live: c.boolean("live", false)}
		if err := c.problem(); err != nil {
			return nil, err
		}
		res, err := s.Snapshot(c.ctx, c.owner, ref, req)
		if err != nil {
			return nil, err
		}
		return structured(res, fmt.Sprintf("Took snapshot %s of sandbox %q.\nGo back to it with restore_sandbox snapshot_id %q.", snapshotLine(res), ref, res.ID)), nil
	})
}

func listSnapshots(k *Kit, s Snapshots) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("list_snapshots",
		mcp.WithToolTitle("List snapshots"),
		mcp.WithDescription("List a sandbox's snapshots, oldest first, with their labels, sizes and times."),
		hints(true, false, true, false),
		sandboxArg(),
		mcp.WithOutputSchema[snapshotList](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		if err := c.problem(); err != nil {
			return nil, err
		}
		list, err := s.ListSnapshots(c.ctx, ref)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Sandbox %q has %d %s.", ref, len(list), plural(len(list), "snapshot", "snapshots"))
		for _, sn := range list {
			b.WriteString("\n- " + snapshotLine(sn))
		}
		if list == nil {
			list = []sandbox.SnapshotInfo{}
		}
		return structured(snapshotList{SandboxID: ref, Snapshots: list}, b.String()), nil
	})
}

func deleteSnapshot(k *Kit, s Snapshots) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("delete_snapshot",
		mcp.WithToolTitle("Delete snapshot"),
		mcp.WithDescription("Delete one of a sandbox's snapshots. The sandbox itself does not change."),
		hints(false, true, true, false),
		sandboxArg(),
		snapshotArg(),
		mcp.WithOutputSchema[snapshotDeleted](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref, snap := c.required("sandbox_id"), c.required("snapshot_id")
		if err := c.problem(); err != nil {
			return nil, err
		}
		if err := s.DeleteSnapshot(c.ctx, c.owner, ref, snap); err != nil {
			return nil, err
		}
		return structured(snapshotDeleted{SandboxID: ref, SnapshotID: snap, Deleted: true}, fmt.Sprintf("Deleted snapshot %s of sandbox %q.", snap, ref)), nil
	})
}

func restoreSandbox(k *Kit, s Snapshots) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("restore_sandbox",
		mcp.WithToolTitle("Restore sandbox to snapshot"),
		mcp.WithDescription("Put a sandbox's files back as one of its snapshots has them: files written since are removed, files deleted or changed come back, packages installed since are gone. "+
			"The sandbox keeps its id, name, settings, limits and network rules. Its background jobs and kernels end first "+
			"(kernels_restarted says whether kernel variables were lost), and so do the servers they ran: their port forwards end (ports_closed; expose_port again once a server runs). "+
			"The snapshot stays, to restore again."),
		hints(false, true, true, false),
		sandboxArg(),
		snapshotArg(),
		mcp.WithOutputSchema[sandbox.RestoreResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref, snap := c.required("sandbox_id"), c.required("snapshot_id")
		if err := c.problem(); err != nil {
			return nil, err
		}
		res, err := s.Restore(c.ctx, c.owner, ref, snap)
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("Restored sandbox %q to snapshot %s in %d ms.", res.Name, res.SnapshotID, res.Milliseconds)
		if res.KernelsRestarted {
			text += "\nIts kernels restarted: variables, imports and definitions are gone; run setup code again."
		}
		if res.JobsEnded > 0 {
			text += fmt.Sprintf("\n%d %s stopped.", res.JobsEnded, plural(res.JobsEnded, "background job was", "background jobs were"))
		}
		if len(res.PortsClosed) > 0 {
			text += fmt.Sprintf("\nThe forwards of ports %v ended with their servers; expose_port again once a server runs.", res.PortsClosed)
		}
		return structured(res, text), nil
	})
}

func forkSandbox(k *Kit, s Snapshots) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("fork_sandbox",
		mcp.WithToolTitle("Fork sandbox"),
		mcp.WithDescription("Make new sandboxes with a copy of a sandbox's files, settings and network rules, to try approaches side by side. "+
			"Each fork is independent: changes in one never reach the original or another fork. Port forwards stay with the original; processes and kernel variables are not copied. "+
			"Forks are ephemeral unless persistent is true; one call makes at most limits.max_forks."),
		hints(false, false, false, false),
		sandboxArg(),
		mcp.WithNumber("count", mcp.DefaultNumber(1), mcp.Description("How many forks to make.")),
		mcp.WithString("name", mcp.Description("The fork's name; with count above 1, forks are named name-1, name-2, … Default: the sandbox's name with -fork- and a random suffix.")),
		mcp.WithBoolean("persistent", mcp.DefaultBool(false), mcp.Description("Keep the forks across sessions and restarts.")),
		mcp.WithOutputSchema[forkList](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		req := sandbox.ForkRequest{Count: int(c.integer("count", 1)), Name: c.string("name"), Persistent: c.boolean("persistent", false)}
		if err := c.problem(); err != nil {
			return nil, err
		}
		forks, err := s.Fork(c.ctx, c.owner, ref, req)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Forked sandbox %q into %d new %s:", ref, len(forks), plural(len(forks), "sandbox", "sandboxes"))
		for _, f := range forks {
			fmt.Fprintf(&b, "\n- %s (sandbox_id %s)", f.Name, shortID(f.SandboxID))
		}
		return structured(forkList{Sandboxes: forks}, b.String()), nil
	})
}
