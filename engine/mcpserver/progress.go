package mcpserver

import (
	"encoding/base64"

	"github.com/mark3labs/mcp-go/mcp"

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
