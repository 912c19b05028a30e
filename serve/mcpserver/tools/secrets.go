package tools

import (
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Secrets is what list_secrets needs from the engine.
type Secrets interface {
	// ListSecrets lists the configured secrets' names and hosts, never a
	// value.
	ListSecrets() []sandbox.SecretInfo
}

// SecretTools is list_secrets.
func SecretTools(k *Kit, b Secrets) []server.ServerTool {
	return toolSet(k, b, listSecrets)
}

// secretsListed is list_secrets' result.
type secretsListed struct {
	Secrets []secretListed `json:"secrets" jsonschema:"The user's secrets: each is in every sandbox created with network \"egress\" as an environment variable holding a placeholder."`
}

type secretListed struct {
	Name      string   `json:"name" jsonschema:"The environment variable, e.g. OPENAI_API_KEY: use it as the key itself ($OPENAI_API_KEY, os.environ[...])."`
	Hosts     []string `json:"hosts" jsonschema:"The only hosts the key works with: Sandtray's egress gate puts the real value in requests to them (HTTPS included); sent anywhere else it is refused."`
	Body      bool     `json:"body" jsonschema:"True when the value is also put into request bodies; else only in headers and the URL's query."`
	Header    string   `json:"header,omitempty" jsonschema:"When set, the one request header the value is put in (e.g. Authorization); a placeholder elsewhere is sent as it is."`
	Query     string   `json:"query,omitempty" jsonschema:"When set, the one query parameter the value is put in (e.g. api_key)."`
	Available bool     `json:"available" jsonschema:"False when Sandtray has no value for it: sandboxes do not get it."`
	Why       string   `json:"why,omitempty" jsonschema:"Why it is not available, and what the user can do."`
}

func listSecrets(k *Kit, b Secrets) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("list_secrets",
		mcp.WithToolTitle("List secrets"),
		mcp.WithDescription("List the API keys the user has given Sandtray, by name and the hosts each works with; never their values. "+
			"A sandbox created with network \"egress\" has each as an environment variable (e.g. $OPENAI_API_KEY) holding a placeholder: "+
			"use it as if it were the key, in a header (Authorization: Bearer $OPENAI_API_KEY) or the URL's query, and Sandtray's egress gate puts the real value in "+
			"requests to that key's hosts. Sent to any other host the request is refused (HTTP 403). The real value is never inside the sandbox: "+
			"printing the variable shows the placeholder. The hosts still have to be allowed on the gate (request_network asks)."),
		hints(true, false, true, false),
		mcp.WithOutputSchema[secretsListed](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		if err := c.problem(); err != nil {
			return nil, err
		}
		out := secretsListed{Secrets: []secretListed{}}
		for _, s := range b.ListSecrets() {
			out.Secrets = append(out.Secrets, secretListed{Name: s.Name, Hosts: s.Hosts, Body: s.Body, Header: s.Header, Query: s.Query, Available: s.Available, Why: s.Why})
		}
		return structured(out, secretsText(out)), nil
	})
}

func secretsText(out secretsListed) string {
	if len(out.Secrets) == 0 {
		return "The user has given Sandtray no secrets. They can add API keys in the Sandtray app's Settings → Secrets, or as [secrets.NAME] in config.toml."
	}
	var b strings.Builder
	for _, s := range out.Secrets {
		if s.Available {
			fmt.Fprintf(&b, "$%s: works with %s", s.Name, strings.Join(s.Hosts, ", "))
			switch {
			case s.Header != "" || s.Query != "":
				var where []string
				if s.Header != "" {
					where = append(where, "header "+s.Header)
				}
				if s.Query != "" {
					where = append(where, "query parameter "+s.Query)
				}
				if s.Body {
					where = append(where, "body")
				}
				fmt.Fprintf(&b, " (in %s only)", strings.Join(where, ", "))
			case s.Body:
				b.WriteString(" (headers, query and body)")
			}
			b.WriteString(".\n")
		} else {
			fmt.Fprintf(&b, "%s: not available (%s).\n", s.Name, s.Why)
		}
	}
	b.WriteString("Each is a placeholder in sandboxes created with network \"egress\"; Sandtray's egress gate puts the real value in requests to its hosts only.")
	return b.String()
}
