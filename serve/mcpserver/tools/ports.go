package tools

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Ports is what expose_port and unexpose_port need from the engine.
type Ports interface {
	// ExposePort forwards port inside a sandbox to 127.0.0.1:hostPort on the
	// host (0: a free port) and returns the forward.
	ExposePort(ctx context.Context, owner sandbox.Owner, ref string, port, hostPort int) (sandbox.PortForward, error)
	// UnexposePort ends a sandbox's forward of port.
	UnexposePort(ctx context.Context, owner sandbox.Owner, ref string, port int) error
}

// PortTools are expose_port and unexpose_port.
func PortTools(k *Kit, b Ports) []server.ServerTool {
	return toolSet(k, b, exposePort, unexposePort)
}

// servingHowTo is the recipe a model follows to show the user a server.
const servingHowTo = "To let the user open a web server, notebook or API running in a sandbox: start it with execute_command background=true, " +
	"listening on 127.0.0.1 or 0.0.0.0 inside the sandbox (e.g. `python3 -m http.server 8000 --bind 127.0.0.1`), " +
	"then call expose_port with that port, then give the user the url it returns. " +
	"This works with network \"none\": the sandbox needs no network, and nothing but the user's own machine can connect."

// portForwarded is expose_port's result.
type portForwarded struct {
	URL      string `json:"url" jsonschema:"The address the user opens on this machine: http://127.0.0.1:<host_port>/ (loopback only)."`
	HostPort int    `json:"host_port" jsonschema:"The port on the host's 127.0.0.1."`
	Port     int    `json:"port" jsonschema:"The port inside the sandbox."`
}

func exposePort(k *Kit, b Ports) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("expose_port",
		mcp.WithToolTitle("Expose a sandbox port"),
		mcp.WithDescription("Forward a TCP port inside a sandbox to the user's machine, at http://127.0.0.1:<host_port>/ (loopback only, never another interface). "+
			servingHowTo+" "+
			"Each connection is relayed into the sandbox through Docker; the server may start after the forward (connections made before it listens are closed) and may restart. "+
			"The forward lasts until unexpose_port, or until the sandbox stops or is deleted; list_sandboxes shows it. Exposing a port already exposed returns its url."),
		hints(false, false, true, false),
		sandboxArg(),
		mcp.WithInteger("port", mcp.Required(), mcp.Min(1), mcp.Max(65535), mcp.Description("The TCP port the server listens on inside the sandbox, e.g. 8000.")),
		mcp.WithInteger("host_port", mcp.Min(1024), mcp.Max(65535),
			mcp.Description("The port on the host's 127.0.0.1 to use. Default: a free port is chosen. Give one only when the user asked for it; "+
				"it must be in the range the user's config allows (ports.host_range, 49152-65535 unless changed), and a refusal names the range.")),
		mcp.WithOutputSchema[portForwarded](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		port := c.requiredPort("port")
		hostPort := int(c.integer("host_port", 0))
		if err := c.problem(); err != nil {
			return nil, err
		}
		fw, err := b.ExposePort(c.ctx, c.owner, ref, port, hostPort)
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("Port %d of sandbox %q is at %s on the user's machine (loopback only). Give the user this URL.", fw.Port, ref, fw.URL)
		return structured(portForwarded{URL: fw.URL, HostPort: fw.HostPort, Port: fw.Port}, text), nil
	})
}

// portClosed is unexpose_port's result.
type portClosed struct {
	SandboxID string `json:"sandbox_id" jsonschema:"The sandbox_id as given."`
	Port      int    `json:"port" jsonschema:"The sandbox port whose forward ended."`
	Closed    bool   `json:"closed" jsonschema:"True: the host port no longer accepts connections."`
}

func unexposePort(k *Kit, b Ports) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("unexpose_port",
		mcp.WithToolTitle("Stop exposing a sandbox port"),
		mcp.WithDescription("End the forward expose_port made: the host port stops accepting connections and open ones are closed. The server in the sandbox keeps running."),
		hints(false, true, false, false),
		sandboxArg(),
		mcp.WithInteger("port", mcp.Required(), mcp.Min(1), mcp.Max(65535), mcp.Description("The port inside the sandbox, as given to expose_port.")),
		mcp.WithOutputSchema[portClosed](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		port := c.requiredPort("port")
		if err := c.problem(); err != nil {
			return nil, err
		}
		if err := b.UnexposePort(c.ctx, c.owner, ref, port); err != nil {
			return nil, err
		}
		return structured(portClosed{SandboxID: ref, Port: port, Closed: true},
			fmt.Sprintf("Port %d of sandbox %q is no longer exposed.", port, ref)), nil
	})
}

// requiredPort returns a required TCP port argument.
func (c *call) requiredPort(name string) int {
	if !c.present(name) {
		c.fail("Missing required argument %q: the TCP port the server listens on inside the sandbox, e.g. 8000.", name)
		return 0
	}
	p := c.integer(name, 0)
	if p < 1 || p > 65535 {
		c.fail("Argument %q must be a TCP port from 1 to 65535 (got %d).", name, p)
	}
	return int(p)
}

// gpus returns create_sandbox's gpus argument as the engine takes it: "",
// "all" or a count, given as a string or a number.
func (c *call) gpus() string {
	if !c.present("gpus") {
		return ""
	}
	if n, ok := c.args["gpus"].(float64); ok {
		if n < 0 || n != float64(int64(n)) {
			c.fail("Argument \"gpus\" must be \"all\" or a whole number of GPUs (got %v).", n)
		}
		return strconv.FormatInt(int64(n), 10)
	}
	return c.string("gpus")
}

// gpusArg is create_sandbox's gpus argument.
func gpusArg() mcp.ToolOption {
	return mcp.WithString("gpus", mcp.Description("NVIDIA GPUs for the sandbox: \"all\" or a count such as \"1\". Default: none (or the configured default). "+
		"Needs a Docker host with the NVIDIA Container Toolkit; without one the call fails saying so."))
}

// portsText renders a sandbox's forwards for list_sandboxes: "8000→http://127.0.0.1:41234/".
func portsText(ports []portSummary) string {
	if len(ports) == 0 {
		return "-"
	}
	s := ""
	for i, p := range ports {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d→%s", p.Port, p.URL)
	}
	return s
}

// portSummary is one forward in list_sandboxes.
type portSummary struct {
	Port     int    `json:"port" jsonschema:"The port inside the sandbox."`
	HostPort int    `json:"host_port" jsonschema:"The port on the host's 127.0.0.1."`
	URL      string `json:"url" jsonschema:"The URL the user opens."`
}

func portSummaries(ports []sandbox.PortForward) []portSummary {
	out := make([]portSummary, 0, len(ports))
	for _, p := range ports {
		out = append(out, portSummary{Port: p.Port, HostPort: p.HostPort, URL: p.URL})
	}
	return out
}
