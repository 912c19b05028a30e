package tools

import (
	"context"
	"encoding/base64"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// outputProgress is the Progress for a run's output: nil when the request
// has no progress token, so the engine does not stream for nobody. done must
// be called when the handler returns.
func outputProgress(c *call) (sandbox.Progress, func()) {
	if c.req.Params.Meta == nil || c.req.Params.Meta.ProgressToken == nil {
		return nil, func() {}
	}
	return progressFor(c.ctx, c.req)
}

// imageContents turns a run's images into MCP content: raster images as
// image content, SVG (which clients do not all render) as an embedded text
// resource. Skipped images are only named, in the text.
func imageContents(images []sandbox.Image) []mcp.Content {
	var out []mcp.Content
	for _, img := range images {
		switch {
		case img.Skipped != "" || len(img.Data) == 0:
		case img.MIME == "image/svg+xml":
			out = append(out, mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: "file://" + img.Path, MIMEType: img.MIME, Text: string(img.Data),
			}))
		default:
			out = append(out, mcp.NewImageContent(base64.StdEncoding.EncodeToString(img.Data), img.MIME))
		}
	}
	return out
}

// progressReporter turns sandbox.Progress calls into notifications/progress
// for the request that carried a progress token.
type progressReporter struct {
	ctx   context.Context
	srv   *server.MCPServer
	token mcp.ProgressToken

	mu     sync.Mutex
	last   float64
	sent   bool
	closed bool
}

// progressFor returns the Progress to hand the engine for req, and a
// function to call when the request is done, after which reports are
// dropped. Without a progress token the Progress does nothing. It never
// blocks: mcp-go drops a notification when the session's queue is full.
func progressFor(ctx context.Context, req mcp.CallToolRequest) (sandbox.Progress, func()) {
	srv := server.ServerFromContext(ctx)
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil || srv == nil {
		return func(float64, float64, string) {}, func() {}
	}
	p := &progressReporter{ctx: ctx, srv: srv, token: req.Params.Meta.ProgressToken}
	return p.report, p.close
}

// report sends one notification. MCP requires progress to increase, so a
// report that does not advance is dropped.
func (p *progressReporter) report(current, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || (p.sent && current <= p.last) {
		return
	}
	params := map[string]any{"progressToken": p.token, "progress": current}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	if err := p.srv.SendNotificationToClient(p.ctx, string(mcp.MethodNotificationProgress), params); err != nil {
		return // queue full or session gone: progress is best effort
	}
	p.last, p.sent = current, true
}

func (p *progressReporter) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}
