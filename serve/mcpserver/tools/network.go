package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Network is what request_network needs from the engine. Answering the user's side of the gate (allow, deny) is deliberately not
// here: no MCP tool can approve a request.
type Network interface {
	// RequestNetwork asks for hosts of an egress sandbox up front, with a
	// reason the user sees; it never waits for the user.
	RequestNetwork(ctx context.Context, owner sandbox.Owner, ref string, hosts []string, reason string) (sandbox.EgressRequestResult, error)
}

// NetworkTools is request_network.
func NetworkTools(k *Kit, b Network) []server.ServerTool {
	return toolSet(k, b, requestNetwork)
}

// networkRequested is request_network's result.
type networkRequested struct {
	Allowed []string      `json:"allowed" jsonschema:"Hosts a rule allows now: connect to them."`
	Denied  []refusedHost `json:"denied" jsonschema:"Hosts that are refused, each with why; asking again does not help."`
	Pending []string      `json:"pending" jsonschema:"Hosts waiting for the user's answer: a connection to one waits for it (up to the configured timeout); retry after the user has answered."`
}

type refusedHost struct {
	Host string `json:"host" jsonschema:"The host as asked for."`
	Why  string `json:"why" jsonschema:"Why it is refused, and what the user can do."`
}

func requestNetwork(k *Kit, b Network) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("request_network",
		mcp.WithToolTitle("Request network access"),
		mcp.WithDescription("Ask the user for access to hosts from a sandbox created with network \"egress\", with a reason they see. "+
			"An egress sandbox reaches the internet only through Sandtray's egress gate (its HTTP_PROXY and HTTPS_PROXY, which curl, pip, apt, npm, git, "+
			"Python and Node use): the package indexes are allowed, other hosts need the user's approval, and a refused connection gets HTTP 403 with a line saying why. "+
			"Call this before a task needs a host, e.g. [\"api.github.com\"], reason \"to download the repository's releases\". "+
			"It returns at once: allowed hosts work now, pending ones wait for the user, denied ones will not work."),
		hints(false, false, true, true),
		sandboxArg(),
		mcp.WithArray("hosts", mcp.Required(), mcp.WithStringItems(), mcp.MinItems(1), mcp.MaxItems(32),
			mcp.Description("Host names, each its own item, optionally with a port (443 by default): [\"pypi.org\", \"api.example.com:8443\"]. No wildcards, no IP addresses.")),
		mcp.WithString("reason", mcp.Required(), mcp.Description("Why the task needs these hosts, in one sentence the user reads before they answer.")),
		mcp.WithOutputSchema[networkRequested](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		hosts := c.stringList("hosts", `e.g. ["pypi.org"]`)
		reason := c.required("reason")
		if err := c.problem(); err != nil {
			return nil, err
		}
		res, err := b.RequestNetwork(c.ctx, c.owner, ref, hosts, reason)
		if err != nil {
			return nil, err
		}
		out := networkRequested{Allowed: res.Allowed, Pending: res.Pending, Denied: make([]refusedHost, 0, len(res.Denied))}
		for _, d := range res.Denied {
			out.Denied = append(out.Denied, refusedHost{Host: d.Host, Why: d.Why})
		}
		return structured(out, networkText(out)), nil
	})
}

func networkText(out networkRequested) string {
	var b strings.Builder
	if len(out.Allowed) > 0 {
		fmt.Fprintf(&b, "Allowed now: %s.\n", strings.Join(out.Allowed, ", "))
	}
	if len(out.Pending) > 0 {
		fmt.Fprintf(&b, "Waiting for the user's answer: %s. A connection to one of them waits for the answer; retry after the user has answered.\n", strings.Join(out.Pending, ", "))
	}
	for _, d := range out.Denied {
		fmt.Fprintf(&b, "Denied: %s: %s\n", d.Host, d.Why)
	}
	return strings.TrimRight(b.String(), "\n")
}

// stringList returns a required non-empty array of strings.
func (c *call) stringList(name, example string) []string {
	v, ok := c.args[name]
	if !ok || v == nil {
		c.fail("Missing required argument %q: %s.", name, example)
		return nil
	}
	items, ok := v.([]any)
	if !ok || len(items) == 0 {
		c.fail("Argument %q must be a non-empty array of strings, %s, not %s.", name, example, describe(v))
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok || strings.TrimSpace(s) == "" {
			c.fail("%s[%d] must be a non-empty string, %s.", name, i, example)
			return nil
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// networkText2 is a sandbox's network in the list: its mode, and the hosts
// the user allowed or denied it.
func networkText2(s sandboxSummary) string {
	t := orDash(s.Network)
	if len(s.EgressAllow) > 0 {
		t += " allow " + strings.Join(s.EgressAllow, ",")
	}
	if len(s.EgressDeny) > 0 {
		t += " deny " + strings.Join(s.EgressDeny, ",")
	}
	return t
}
