package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Resources is what the resources need from the engine.
type Resources interface {
	// List describes every sandbox, with fresh resource stats.
	List(ctx context.Context) ([]sandbox.Info, error)
	ActivityLog
}

// The resources the server offers. Both are JSON: the sandboxes as
// list_sandboxes returns them, and one sandbox's activity log as sandbox_logs
// returns it.
const (
	SandboxesURI    = "sandtray://sandboxes"
	logsURITemplate = "sandtray://sandbox/{id}/logs"
	jsonMIME        = "application/json"
)

// AddResources registers the resources and the resource template.
func AddResources(srv *server.MCPServer, b Resources) {
	srv.AddResource(sandboxesResource(b))
	srv.AddResourceTemplate(logsResource(b))
}

func sandboxesResource(b Resources) (mcp.Resource, server.ResourceHandlerFunc) {
	resource := mcp.NewResource(SandboxesURI, "sandboxes",
		mcp.WithResourceTitle("Sandboxes"),
		mcp.WithResourceDescription("Every sandbox on this machine, whichever client created it: id, name, image, status, "+
			"persistence, owner, creation time and current CPU and memory use, as list_sandboxes reports them. "+
			"Subscribe to hear when sandboxes are created or removed."),
		mcp.WithMIMEType(jsonMIME),
	)
	return resource, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		infos, err := b.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("list sandboxes: %w", err)
		}
		return jsonContents(req.Params.URI, summarize(infos))
	}
}

func logsResource(b Resources) (mcp.ResourceTemplate, server.ResourceTemplateHandlerFunc) {
	template := mcp.NewResourceTemplate(logsURITemplate, "sandbox-logs",
		mcp.WithTemplateTitle("Sandbox activity log"),
		mcp.WithTemplateDescription("The activity log of one sandbox, oldest first: every tool call that touched it, "+
			"by any client, with the command or code, exit code, duration and output, as sandbox_logs reports them. "+
			"{id} is the sandbox's id, a unique prefix of it, or its name. It holds the newest entries that fit in about 512 KiB; "+
			"next_skip, when set, is the skip to pass to sandbox_logs for the older ones."),
		mcp.WithTemplateMIMEType(jsonMIME),
	)
	return template, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		ref := templateArg(req.Params.Arguments, "id")
		if ref == "" {
			return nil, fmt.Errorf("%s names no sandbox; use %s with a sandbox id or name", req.Params.URI, logsURITemplate)
		}
		// The newest entries that fit in one reply; next_skip says where
		// sandbox_logs takes over.
		entries, err := b.Logs(ctx, ref, 0)
		if err != nil {
			return nil, fmt.Errorf("activity log of sandbox %q: %w", ref, err)
		}
		return jsonContents(req.Params.URI, activityPage(entries, 0, 0))
	}
}

// templateArg returns a variable matched from a URI template, which mcp-go
// hands over as a string or, for list variables, a slice of strings.
func templateArg(args map[string]any, name string) string {
	switch v := args[name].(type) {
	case string:
		return v
	case []string:
		if len(v) == 1 {
			return v[0]
		}
	}
	return ""
}

// jsonContents is a resource's contents: v as one JSON text.
func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: jsonMIME, Text: string(body)}}, nil
}
