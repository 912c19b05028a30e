package tools

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Capture is what commit_sandbox, export_dockerfile and diff_sandbox need
// from the engine.
type Capture interface {
	// Commit saves a sandbox's filesystem as a new tagged image. progress is
	// never nil and must not be called after it returns.
	Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error)
	// ExportDockerfile returns a Dockerfile that rebuilds a sandbox and, when
	// hostPath is not empty, writes it there with its build context.
	ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error)
	// Diff reports how a sandbox's filesystem (under path, if set) differs from its image.
	Diff(ctx context.Context, owner sandbox.Owner, ref, path string) (sandbox.Diff, error)
}

// CaptureTools are commit_sandbox, export_dockerfile and diff_sandbox.
func CaptureTools(k *Kit, b Capture) []server.ServerTool {
	return toolSet(k, b, commitSandbox, exportDockerfile, diffSandbox)
}

// committedImage is commit_sandbox's result.
type committedImage struct {
	Image   string `json:"image" jsonschema:"The real reference the image was saved as (under Sandtray's namespace, e.g. sandtray-local/my-env:v1); pass it as image to create_sandbox."`
	ImageID string `json:"image_id" jsonschema:"The new image's id."`
}

func commitSandbox(k *Kit, b Capture) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("commit_sandbox",
		mcp.WithToolTitle("Save sandbox as image"),
		mcp.WithDescription("Save a sandbox's current files as a new Docker image on this machine, "+
			"to start new sandboxes from with create_sandbox image. Only files are saved, not running processes. "+
			"Images are saved only under Sandtray's own namespace (commit.namespace, default sandtray-local/): image \"my-env:v1\" is saved as sandtray-local/my-env:v1, and the result names the real reference. "+
			"A registry host is refused. An existing tag is refused unless overwrite is true, and overwrite moves only a tag of an image Sandtray committed; "+
			"the sandbox's base image and the images Sandtray's configuration starts sandboxes from are never replaced. "+
			"Progress is reported when the request has a progress token."),
		// Destructive: with overwrite it re-points an existing tag, and
		// hints describe the tool, not one call. Without overwrite it only
		// adds an image.
		hints(false, true, false, false),
		sandboxArg(),
		mcp.WithString("image", mcp.Required(),
			mcp.Description("The new image's name and tag, repo:tag, lowercase, e.g. \"my-env:v1\"; it is saved under Sandtray's namespace (sandtray-local/my-env:v1 by default).")),
		mcp.WithBoolean("overwrite", mcp.DefaultBool(false),
			mcp.Description("Move the tag if an image Sandtray committed already has it; the image it leaves is removed unless another tag, a sandbox or an image still uses it. Default false: an existing tag is refused. Images Sandtray did not commit are never replaced.")),
		mcp.WithOutputSchema[committedImage](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		image := c.required("image")
		if msg := imageProblem(image); image != "" && msg != "" {
			c.fail("%s", msg)
		}
		req := sandbox.CommitRequest{Image: image, Overwrite: c.boolean("overwrite", false)}
		if err := c.problem(); err != nil {
			return nil, err
		}
		progress, done := progressFor(c.ctx, c.req)
		res, err := b.Commit(c.ctx, c.owner, ref, req, progress)
		done()
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("Saved sandbox %q as image %s (id %s).\nStart a sandbox from it with create_sandbox image %q.",
			ref, res.Image, shortID(strings.TrimPrefix(res.ImageID, "sha256:")), res.Image)
		return structured(committedImage{Image: res.Image, ImageID: res.ImageID}, text), nil
	})
}

// imageReference is a tagged Docker image reference, after Docker's own
// grammar: an optional registry host (with port), lowercase path components,
// and a tag.
var imageReference = func() *regexp.Regexp {
	const (
		label     = `[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?`
		host      = label + `(?:\.` + label + `)*(?::[0-9]+)?`
		component = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
		tag       = `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`
	)
	return regexp.MustCompile(`^(?:` + host + `/)?` + component + `(?:/` + component + `)*:` + tag + `$`)
}()

// imageProblem explains what is wrong with a commit target, or returns "".
func imageProblem(image string) string {
	const shape = `Use repo:tag, e.g. "my-env:v1".`
	lastPart := image[strings.LastIndex(image, "/")+1:]
	switch {
	case strings.Contains(image, "@"):
		return fmt.Sprintf("Argument \"image\" %q is a digest reference; commit_sandbox needs a tag to create. %s", image, shape)
	case !strings.Contains(lastPart, ":"):
		return fmt.Sprintf("Argument \"image\" %q has no tag. %s", image, shape)
	case len(image) > 255:
		return fmt.Sprintf("Argument \"image\" is %d characters long; Docker allows 255. %s", len(image), shape)
	case !imageReference.MatchString(image):
		if imageReference.MatchString(strings.ToLower(image)) {
			return fmt.Sprintf("Argument \"image\" %q must be lowercase before the tag: %q.", image, lowerRepo(image))
		}
		return fmt.Sprintf("Argument \"image\" %q is not a valid image name: components are lowercase letters, digits and . _ -, "+
			"the tag letters, digits and . _ -. %s", image, shape)
	}
	return ""
}

// lowerRepo lowercases a reference's repository, keeping its tag.
func lowerRepo(image string) string {
	i := strings.LastIndex(image, ":")
	return strings.ToLower(image[:i]) + image[i:]
}

// dockerfileExport is export_dockerfile's result.
type dockerfileExport struct {
	Dockerfile string   `json:"dockerfile" jsonschema:"The Dockerfile's text."`
	Dir        string   `json:"dir,omitempty" jsonschema:"The host folder it was written to, with its build context; absent without host_path."`
	Files      []string `json:"files" jsonschema:"The build-context files its ADD line needs (rootfs.tar), relative to dir, besides Dockerfile and .dockerignore."`
}

func exportDockerfile(k *Kit, b Capture) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("export_dockerfile",
		mcp.WithToolTitle("Export as Dockerfile"),
		mcp.WithDescription("Produce a Dockerfile that rebuilds a sandbox: FROM its base image, its environment, workdir and user, "+
			"RUN lines installing the packages install_packages recorded, at their exact versions, an ADD of rootfs.tar holding the files added or changed in it, and RUN rm for files it deleted from the image. "+
			"Returns the Dockerfile as text. With host_path it also writes it, rootfs.tar and a .dockerignore "+
			"to that folder on the user's machine, ready for docker build; host_path must lie under a directory the user allowed in Sandtray's settings, "+
			"and be a new or empty folder, or one holding exactly Sandtray's own earlier export to it (anything else is refused, never overwritten). "+
			"rootfs.tar is bounded like a copy: limits.max_copy_bytes (default 1 GiB) and limits.max_copy_files (default 100000)."),
		// Destructive: with host_path it writes, and may overwrite, files on
		// the user's machine (hints describe the tool, not one call).
		// Idempotent: the same sandbox exports the same files.
		hints(false, true, true, false),
		sandboxArg(),
		mcp.WithString("host_path", mcp.Description("Absolute path of a folder on the user's machine to write the Dockerfile and its build context to. "+
			"Default: nothing is written; the Dockerfile is only returned.")),
		mcp.WithOutputSchema[dockerfileExport](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		hostPath := c.string("host_path") // the engine checks it against the allowed roots
		if err := c.problem(); err != nil {
			return nil, err
		}
		res, err := b.ExportDockerfile(c.ctx, c.owner, ref, hostPath)
		if err != nil {
			return nil, err
		}
		out := dockerfileExport{Dockerfile: res.Dockerfile, Dir: res.Dir, Files: nonNil(res.Files)}
		return structured(out, exportText(res)), nil
	})
}

// exportText says where the export went, then shows the Dockerfile.
func exportText(res sandbox.Export) string {
	files := fmt.Sprintf("%d build-context %s", len(res.Files), plural(len(res.Files), "file", "files"))
	var head string
	switch {
	case res.Dir != "":
		head = fmt.Sprintf("Wrote Dockerfile, .dockerignore and %s to %s, ready for docker build.", files, res.Dir)
	case len(res.Files) > 0:
		head = fmt.Sprintf("Nothing was written. It needs %s beside it; pass host_path to write them with it.", files)
	default:
		head = "Nothing was written; pass host_path to save it."
	}
	return head + "\n\n" + strings.TrimRight(res.Dockerfile, "\n")
}

// diffResult is diff_sandbox's result.
type diffResult struct {
	Added   []string `json:"added" jsonschema:"Paths created since the sandbox started from its image."`
	Changed []string `json:"changed" jsonschema:"Paths modified."`
	Deleted []string `json:"deleted" jsonschema:"Paths removed."`
}

func diffSandbox(k *Kit, b Capture) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("diff_sandbox",
		mcp.WithToolTitle("Show sandbox changes"),
		mcp.WithDescription("List the files added, changed and deleted in a sandbox compared with the image it was created from, "+
			"like docker diff. Narrow it to a directory with path (relative to /workspace unless absolute)."),
		readOnly,
		sandboxArg(),
		mcp.WithString("path", mcp.Description("Only report changes under this path. Default: the whole filesystem.")),
		mcp.WithOutputSchema[diffResult](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		under := c.string("path")
		if err := c.problem(); err != nil {
			return nil, err
		}
		d, err := b.Diff(c.ctx, c.owner, ref, under)
		if err != nil {
			return nil, err
		}
		out := diffResult{Added: nonNil(d.Added), Changed: nonNil(d.Changed), Deleted: nonNil(d.Deleted)}
		return structured(out, diffText(out)), nil
	})
}

// diffText renders changes as `docker diff` does: A, C or D and the path.
func diffText(d diffResult) string {
	var lines []string
	for _, group := range []struct {
		mark  string
		paths []string
	}{{"A", d.Added}, {"C", d.Changed}, {"D", d.Deleted}} {
		for _, p := range group.paths {
			lines = append(lines, group.mark+" "+p)
		}
	}
	if len(lines) == 0 {
		return "No changes from the image."
	}
	return strings.Join(lines, "\n")
}
