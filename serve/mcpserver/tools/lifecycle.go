package tools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Lifecycle is what persist_sandbox, stop_sandbox and delete_sandbox need
// from the engine.
type Lifecycle interface {
	// SetPersistent makes a sandbox survive its session (or not).
	SetPersistent(ctx context.Context, owner sandbox.Owner, ref string, persistent bool) (sandbox.Info, error)
	// Stop stops a sandbox's container, keeping its filesystem.
	Stop(ctx context.Context, owner sandbox.Owner, ref string) (sandbox.Info, error)
	// Delete removes a sandbox and its container.
	Delete(ctx context.Context, owner sandbox.Owner, ref string) error
}

// LifecycleTools are persist_sandbox, stop_sandbox and delete_sandbox.
func LifecycleTools(k *Kit, b Lifecycle) []server.ServerTool {
	return toolSet(k, b, persistSandbox, stopSandbox, deleteSandbox)
}

// sandboxState is the result of persist_sandbox and stop_sandbox.
type sandboxState struct {
	SandboxID  string `json:"sandbox_id" jsonschema:"The sandbox id."`
	Name       string `json:"name" jsonschema:"The sandbox name."`
	Status     string `json:"status" jsonschema:"running, stopped, paused or missing."`
	Persistent bool   `json:"persistent" jsonschema:"Whether it survives the end of its session."`
}

func stateOf(info sandbox.Info) sandboxState {
	return sandboxState{SandboxID: info.ID, Name: info.Name, Status: string(info.Status), Persistent: info.Persistent}
}

func persistSandbox(k *Kit, b Lifecycle) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("persist_sandbox",
		mcp.WithToolTitle("Keep or release a sandbox"),
		mcp.WithDescription("Make a sandbox persistent, so it survives the end of this session and restarts of Sandtray until it is deleted "+
			"(persistent true, the default), or ephemeral again, so it is removed after its session ends (persistent false)."),
		// Not destructive: persistent false only makes the sandbox eligible
		// for removal later, and can be undone until then.
		hints(false, false, true, false),
		sandboxArg(),
		mcp.WithBoolean("persistent", mcp.DefaultBool(true), mcp.Description("true (default) to keep the sandbox, false to let it be removed after its session.")),
		mcp.WithOutputSchema[sandboxState](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		persistent := c.boolean("persistent", true)
		if err := c.problem(); err != nil {
			return nil, err
		}
		info, err := b.SetPersistent(c.ctx, c.owner, ref, persistent)
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("Sandbox %q is now persistent: it stays until deleted.", info.Name)
		if !info.Persistent {
			text = fmt.Sprintf("Sandbox %q is now ephemeral: it is removed after its session ends.", info.Name)
		}
		return structured(stateOf(info), text), nil
	})
}

func stopSandbox(k *Kit, b Lifecycle) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("stop_sandbox",
		mcp.WithToolTitle("Stop sandbox"),
		mcp.WithDescription("Stop a sandbox's container. Everything running in it is killed, including background jobs; its files are kept. "+
			"Use delete_sandbox to remove it entirely."),
		// Destructive: it kills every process in the sandbox.
		hints(false, true, true, false),
		sandboxArg(),
		mcp.WithOutputSchema[sandboxState](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		if err := c.problem(); err != nil {
			return nil, err
		}
		info, err := b.Stop(c.ctx, c.owner, ref)
		if err != nil {
			return nil, err
		}
		return structured(stateOf(info), fmt.Sprintf("Sandbox %q is %s; its files are kept.", info.Name, info.Status)), nil
	})
}

// sandboxDeleted is delete_sandbox's result.
type sandboxDeleted struct {
	SandboxID string `json:"sandbox_id" jsonschema:"The sandbox_id as given."`
	Deleted   bool   `json:"deleted" jsonschema:"True: the sandbox and its files are gone."`
}

func deleteSandbox(k *Kit, b Lifecycle) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("delete_sandbox",
		mcp.WithToolTitle("Delete sandbox"),
		mcp.WithDescription("Delete a sandbox: kill everything running in it and remove its container and all its files. This cannot be undone; "+
			"copy out anything you need first (copy_from_sandbox)."),
		// Destructive and irreversible; idempotent in effect (a second call
		// finds nothing to delete).
		hints(false, true, true, false),
		sandboxArg(),
		mcp.WithOutputSchema[sandboxDeleted](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		if err := c.problem(); err != nil {
			return nil, err
		}
		if err := b.Delete(c.ctx, c.owner, ref); err != nil {
			return nil, err
		}
		return structured(sandboxDeleted{SandboxID: ref, Deleted: true}, fmt.Sprintf("Deleted sandbox %q.", ref)), nil
	})
}
