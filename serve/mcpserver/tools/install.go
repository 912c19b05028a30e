package tools

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Installer is what install_packages needs from the engine.
type Installer interface {
	// InstallPackages installs packages in a sandbox, with network access
	// for the install only, and records their versions in its manifest.
	// progress is never nil and must not be called after it returns.
	InstallPackages(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.InstallRequest, progress sandbox.Progress) (sandbox.InstallResult, error)
}

// InstallTools is install_packages.
func InstallTools(k *Kit, b Installer) []server.ServerTool {
	return toolSet(k, b, installPackages)
}

// packageManagers are the manager argument's choices; managerAliases are
// other spellings a model is likely to use.
var (
	packageManagers = []string{sandbox.ManagerAuto, sandbox.ManagerApt, sandbox.ManagerPip, sandbox.ManagerNpm, sandbox.ManagerApk}
	managerAliases  = map[string]string{"apt-get": sandbox.ManagerApt, "pip3": sandbox.ManagerPip}
)

// installedPackage is one entry of install_packages' result.
type installedPackage struct {
	Manager string `json:"manager" jsonschema:"The package manager that installed it: apt, apk, pip or npm."`
	Name    string `json:"name" jsonschema:"The package name."`
	Version string `json:"version" jsonschema:"The exact version now installed."`
}

// installResult is install_packages' result.
type installResult struct {
	Installed  []installedPackage `json:"installed" jsonschema:"The requested packages with the exact versions now installed; export_dockerfile pins these."`
	Manager    string             `json:"manager" jsonschema:"The package manager used: apt, apk, pip or npm."`
	Output     string             `json:"output" jsonschema:"The package manager's output, capped."`
	DurationMS int64              `json:"duration_ms" jsonschema:"How long the install took, in milliseconds."`
}

func installPackages(k *Kit, b Installer) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("install_packages",
		mcp.WithToolTitle("Install packages"),
		mcp.WithDescription("Install packages in a sandbox and report the exact versions installed. "+
			"manager auto (the default) picks from what the image has: apt (Debian, Ubuntu), apk (Alpine), pip (Python) or npm (Node). "+
			"The sandbox gets network access for the install only and loses it afterwards, also when the install fails. "+
			"The installed versions are recorded, so export_dockerfile pins them. "+
			"The package manager's output is reported as progress while it runs when the request has a progress token."),
		// Not destructive: it only adds to a disposable sandbox. Open world:
		// it downloads from package mirrors. Not idempotent: a later call
		// can pick up newer versions.
		hints(false, false, false, true), taskable, iconPackage,
		sandboxArg(),
		mcp.WithArray("packages", mcp.Required(), mcp.WithStringItems(), mcp.MinItems(1),
			mcp.Description("Package names, each its own item, optionally pinned the package manager's way: "+
				"[\"numpy==2.1.0\", \"pandas\"] for pip, [\"curl=7.88.1-10+deb12u8\"] for apt.")),
		mcp.WithString("manager", mcp.Enum(packageManagers...), mcp.DefaultString(sandbox.ManagerAuto),
			mcp.Description("The package manager to use. Default auto: picked from what the image has.")),
		mcp.WithNumber("timeout_s", mcp.Min(0),
			mcp.Description("Seconds to allow for the whole install before it is stopped. Default: the configured maximum.")),
		mcp.WithOutputSchema[installResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		req := sandbox.InstallRequest{
			Packages: c.packages(),
			Manager:  c.oneOf("manager", sandbox.ManagerAuto, packageManagers, managerAliases),
			Timeout:  c.seconds("timeout_s"),
		}
		if err := c.problem(); err != nil {
			return nil, err
		}
		progress, done := progressFor(c.ctx, c.req)
		res, err := b.InstallPackages(c.ctx, c.owner, ref, req, progress)
		done()
		if err != nil {
			return nil, err
		}
		out := installResult{Installed: make([]installedPackage, 0, len(res.Installed)),
			Manager: res.Manager, Output: res.Output, DurationMS: res.Duration.Milliseconds()}
		for _, p := range res.Installed {
			out.Installed = append(out.Installed, installedPackage{Manager: p.Manager, Name: p.Name, Version: p.Version})
		}
		return structured(out, installText(res)), nil
	})
}

// packages returns the packages argument: a non-empty list of names, each
// one argument to the package manager.
func (c *call) packages() []string {
	const example = `e.g. ["numpy", "pandas"]`
	v, ok := c.args["packages"]
	if !ok || v == nil {
		c.fail("Missing required argument \"packages\": list the packages to install, %s.", example)
		return nil
	}
	items, ok := v.([]any)
	switch {
	case !ok:
		c.fail("Argument \"packages\" must be an array of package names, %s, not %s.", example, describe(v))
		return nil
	case len(items) == 0:
		c.fail("Argument \"packages\" must list at least one package, %s.", example)
		return nil
	}
	names := make([]string, 0, len(items))
	for i, item := range items {
		name, ok := item.(string)
		if !ok {
			c.fail("packages[%d] must be a package name (a string), not %s.", i, describe(item))
			return nil
		}
		if msg := packageProblem(strings.TrimSpace(name)); msg != "" {
			c.fail("packages[%d] %s", i, msg)
			return nil
		}
		names = append(names, strings.TrimSpace(name))
	}
	return names
}

// packageProblem explains what is wrong with one package name, or returns "".
func packageProblem(name string) string {
	switch {
	case name == "":
		return "is empty; remove it or give a package name."
	case strings.HasPrefix(name, "-"):
		return fmt.Sprintf("%q looks like an option; give package names only, pinned if need be (\"numpy==2.1.0\").", name)
	case strings.IndexFunc(name, unicode.IsSpace) >= 0:
		return fmt.Sprintf("%q contains a space; give each package as its own item, and write version constraints without spaces (\"numpy>=2\").", name)
	}
	return ""
}

// installText summarizes an install: what is now installed, then the
// package manager's output.
func installText(res sandbox.InstallResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Installed %d %s with %s in %s",
		len(res.Installed), plural(len(res.Installed), "package", "packages"), res.Manager, formatSeconds(res.Duration))
	if len(res.Installed) > 0 {
		b.WriteString(":")
	}
	b.WriteString("\n")
	for _, p := range res.Installed {
		fmt.Fprintf(&b, "  %s %s\n", p.Name, p.Version)
	}
	if len(res.Installed) > 0 {
		b.WriteString("export_dockerfile pins these versions.\n")
	}
	if res.Output != "" {
		b.WriteString("[output]\n")
		writeBlock(&b, res.Output)
	}
	return strings.TrimRight(b.String(), "\n")
}
