package tools

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Sandboxes is what create_sandbox and list_sandboxes need from the engine.
type Sandboxes interface {
	// Create makes a sandbox. progress is never nil and must not be called
	// after Create returns.
	Create(ctx context.Context, owner sandbox.Owner, req sandbox.CreateRequest, progress sandbox.Progress) (sandbox.Info, error)
	// List describes every sandbox, with fresh resource stats.
	List(ctx context.Context) ([]sandbox.Info, error)
}

// SandboxTools are create_sandbox and list_sandboxes.
func SandboxTools(k *Kit, b Sandboxes) []server.ServerTool {
	return toolSet(k, b, createSandbox, listSandboxes)
}

// sandboxCreated is create_sandbox's result.
type sandboxCreated struct {
	SandboxID  string `json:"sandbox_id" jsonschema:"The new sandbox's id; pass it, or the name, as sandbox_id to other tools."`
	Name       string `json:"name" jsonschema:"The sandbox's unique name."`
	Image      string `json:"image" jsonschema:"The Docker image it was created from."`
	Workdir    string `json:"workdir" jsonschema:"The directory relative paths resolve against."`
	Persistent bool   `json:"persistent" jsonschema:"Whether it survives the end of this session."`
	Network    string `json:"network" jsonschema:"none (no network), egress (through Sandtray's egress gate) or bridge."`
}

func createSandbox(k *Kit, b Sandboxes) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("create_sandbox",
		mcp.WithToolTitle("Create sandbox"),
		mcp.WithDescription("Create a new isolated sandbox (a hardened Docker container) to run code and commands in. "+
			"You rarely need this: execute_code and execute_command create a default sandbox for this session on first use. "+
			"Create one to choose the image, to get network access (network \"egress\"), to keep it across sessions (persistent), or to work in several sandboxes at once. "+
			"Defaults: the image for the language (python), no network, ephemeral (removed after this session ends), the configured memory and CPU limits. "+
			"Pulling an image may take a while; progress is reported when the request has a progress token. "+
			"Each folder the image declares as a VOLUME is an in-memory tmpfs (at most 256 MB, counted in the memory limit): files there are not kept by commit_sandbox, diff or export_dockerfile."),
		hints(false, false, false, true),
		mcp.WithString("image", mcp.Description("Docker image to create it from, e.g. \"python:3.12-slim\". Default: the configured image for language.")),
		mcp.WithString("language", mcp.Enum(k.Languages...),
			mcp.Description("Language the sandbox is mainly for; picks the default image. Default: python.")),
		mcp.WithString("name", mcp.Description("A unique name to refer to it by, e.g. \"data-analysis\". Default: a generated name.")),
		mcp.WithBoolean("persistent", mcp.DefaultBool(false),
			mcp.Description("Keep the sandbox after this session ends, until deleted. Default false: it is removed when the session ends.")),
		mcp.WithString("network", mcp.Enum(sandbox.NetworkNone, sandbox.NetworkEgress, sandbox.NetworkBridge), mcp.DefaultString(sandbox.NetworkNone),
			mcp.Description("\"none\" (default): no network at all. \"egress\": HTTP and HTTPS through Sandtray's egress gate (its proxy variables are set; curl, pip, apt, npm, git, Python and Node use them): "+
				"the package indexes are allowed, other hosts need the user's approval (request_network asks), and a refusal is HTTP 403 saying why. "+
				"\"bridge\": the whole network, unfiltered, only when the user's config allows it.")),
		mcp.WithInteger("memory_mb", mcp.Min(0), mcp.Description("Memory limit in MiB. Default: the configured limit.")),
		mcp.WithNumber("cpus", mcp.Min(0), mcp.Description("CPU limit in cores, e.g. 1.5. Default: the configured limit.")),
		mcp.WithObject("env", mcp.AdditionalProperties(map[string]any{"type": "string"}),
			mcp.Description("Environment variables set for everything run in the sandbox, e.g. {\"LANG\": \"C.UTF-8\"}. Names starting with NVIDIA_ or LD_ are refused: ask for GPUs with gpus.")),
		gpusArg(),
		mcp.WithOutputSchema[sandboxCreated](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		req := sandbox.CreateRequest{
			Image:      c.string("image"),
			Language:   c.language(),
			Name:       c.string("name"),
			Persistent: c.boolean("persistent", false),
			Network:    c.oneOf("network", "", []string{sandbox.NetworkNone, sandbox.NetworkEgress, sandbox.NetworkBridge}, nil),
			MemoryMB:   c.integer("memory_mb", 0),
			CPUs:       c.number("cpus", 0),
			Env:        c.stringMap("env"),
			GPUs:       c.gpus(),
		}
		if err := c.problem(); err != nil {
			return nil, err
		}
		progress, done := progressFor(c.ctx, c.req)
		info, err := b.Create(c.ctx, c.owner, req, progress)
		done()
		if err != nil {
			return nil, err
		}
		out := sandboxCreated{
			SandboxID: info.ID, Name: info.Name, Image: info.Image, Workdir: info.Spec.Workdir,
			Persistent: info.Persistent, Network: info.Spec.Network,
		}
		lifetime := "ephemeral: it is removed when this session ends unless you call persist_sandbox"
		if info.Persistent {
			lifetime = "persistent: it stays until deleted"
		}
		text := fmt.Sprintf("Created sandbox %q (id %s) from %s.\nWorkdir %s, network %s, %s.\nPass sandbox_id %q to the other tools.",
			info.Name, shortID(info.ID), info.Image, info.Spec.Workdir, info.Spec.Network, lifetime, info.Name)
		return structured(out, text), nil
	})
}

// sandboxSummary is one entry of list_sandboxes.
type sandboxSummary struct {
	ID          string        `json:"id" jsonschema:"The sandbox id."`
	Name        string        `json:"name" jsonschema:"The unique name."`
	Image       string        `json:"image" jsonschema:"The image it was created from."`
	Status      string        `json:"status" jsonschema:"running, stopped, paused or missing."`
	Persistent  bool          `json:"persistent" jsonschema:"Whether it survives the end of its session."`
	Owner       string        `json:"owner" jsonschema:"The client that created it, as \"name version\"."`
	CreatedAt   string        `json:"created_at" jsonschema:"Creation time, RFC 3339."`
	CPUPercent  float64       `json:"cpu_percent" jsonschema:"CPU use; 100 is one full core."`
	MemoryBytes uint64        `json:"memory_bytes" jsonschema:"Memory in use, in bytes."`
	Ports       []portSummary `json:"ports" jsonschema:"Ports forwarded to the host by expose_port: open url on this machine."`
	GPUs        string        `json:"gpus,omitempty" jsonschema:"The GPUs it was given: all or a count; absent for none."`
	Profile     string        `json:"profile,omitempty" jsonschema:"standard, or strict: a read-only root, the workdir and /tmp in memory, a non-root user, no network and no install_packages."`
	Network     string        `json:"network" jsonschema:"none, egress (through Sandtray's egress gate) or bridge."`
	EgressAllow []string      `json:"egress_allow,omitempty" jsonschema:"Hosts the user allowed this egress sandbox (besides the package indexes and the user's global rules)."`
	EgressDeny  []string      `json:"egress_deny,omitempty" jsonschema:"Hosts the user denied this egress sandbox."`
}

type sandboxList struct {
	Sandboxes []sandboxSummary `json:"sandboxes" jsonschema:"Every sandbox, whichever session created it."`
}

func listSandboxes(k *Kit, b Sandboxes) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("list_sandboxes",
		mcp.WithToolTitle("List sandboxes"),
		mcp.WithDescription("List every sandbox on this machine with its id, name, image, status, owner and current CPU and memory use. "+
			"Use it to find a sandbox_id or to see what is still running."),
		readOnly,
		mcp.WithOutputSchema[sandboxList](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		infos, err := b.List(c.ctx)
		if err != nil {
			return nil, err
		}
		out := summarize(infos)
		return structured(out, sandboxTable(out.Sandboxes)), nil
	})
}

// summarize is list_sandboxes' result, and the sandtray://sandboxes resource.
func summarize(infos []sandbox.Info) sandboxList {
	out := sandboxList{Sandboxes: make([]sandboxSummary, 0, len(infos))}
	for _, info := range infos {
		out.Sandboxes = append(out.Sandboxes, sandboxSummary{
			ID: info.ID, Name: info.Name, Image: info.Image, Status: string(info.Status),
			Persistent: info.Persistent, Owner: info.Owner.Client,
			CreatedAt:  info.CreatedAt.UTC().Format(time.RFC3339),
			CPUPercent: info.Stats.CPUPercent, MemoryBytes: info.Stats.MemoryBytes,
			Ports: portSummaries(info.Ports), GPUs: info.Spec.GPUs, Profile: info.Spec.Profile,
			Network: info.Spec.Network, EgressAllow: info.EgressRules.Allow, EgressDeny: info.EgressRules.Deny,
		})
	}
	return out
}

// sandboxTable renders sandboxes like `docker ps`.
func sandboxTable(list []sandboxSummary) string {
	if len(list) == 0 {
		return "No sandboxes. execute_code and execute_command create one on first use; create_sandbox makes one explicitly."
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tIMAGE\tSTATUS\tPERSISTENT\tOWNER\tCPU\tMEMORY\tPORTS\tNETWORK")
	for _, s := range list {
		persistent := "no"
		if s.Persistent {
			persistent = "yes"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%s\t%s\t%s\n", shortID(s.ID), s.Name, s.Image, s.Status,
			persistent, orDash(s.Owner), s.CPUPercent, formatBytes(int64(s.MemoryBytes)), portsText(s.Ports), networkText2(s))
	}
	w.Flush()
	return strings.TrimRight(b.String(), "\n")
}

// language returns the language argument in its canonical spelling, "" when
// absent (the engine's default, python).
func (c *call) language() string {
	return c.oneOf("language", "", c.k.Languages, c.k.LanguageAliases)
}
