package tools

import (
	"encoding/base64"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tool icons (MCP 2025-11-25): small SVGs as data URIs, so a client shows
// them without fetching anything. currentColor lets the client theme them.
var (
	// iconRun is a terminal prompt, for the tools that run code.
	iconRun = svgIcon(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><rect x="2" y="4" width="20" height="16" rx="2"/><path d="m6 9 3 3-3 3M12 15h6"/></svg>`)
	// iconPackage is a box, for install_packages.
	iconPackage = svgIcon(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M21 8 12 3 3 8v8l9 5 9-5z"/><path d="m3 8 9 5 9-5M12 13v8"/></svg>`)
)

func svgIcon(svg string) mcp.ToolOption {
	return mcp.WithToolIcons(mcp.Icon{
		Src:      "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)),
		MIMEType: "image/svg+xml",
		Sizes:    []string{"any"},
	})
}
