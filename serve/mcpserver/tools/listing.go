package tools

import (
	"fmt"
	"path"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// maxListDepth bounds list_files' recursion; deeper trees are rarely useful
// to a model and can be huge.
const maxListDepth = 10

// fileEntry is one entry of list_files.
type fileEntry struct {
	Path    string `json:"path" jsonschema:"Path relative to the listed directory."`
	Type    string `json:"type" jsonschema:"file, dir, symlink or other."`
	Size    int64  `json:"size" jsonschema:"Size in bytes."`
	Mode    string `json:"mode" jsonschema:"Permission bits in octal, e.g. 0644."`
	ModTime string `json:"mod_time" jsonschema:"Last modification time, RFC 3339."`
	Target  string `json:"target,omitempty" jsonschema:"A symlink's target."`
}

// fileListing is list_files' result.
type fileListing struct {
	Path    string      `json:"path" jsonschema:"The absolute path of the listed directory."`
	Entries []fileEntry `json:"entries" jsonschema:"The entries, sorted by path, depth first."`
	Tree    string      `json:"tree,omitempty" jsonschema:"The listing drawn as a tree, when depth is more than 1."`
	// NextOffset pages a listing too big for one reply.
	NextOffset int `json:"next_offset,omitempty" jsonschema:"Set when entries were left out because the reply holds at most about 512 KiB: pass as offset to get the next ones."`
}

func listFiles(k *Kit, b Files) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("list_files",
		mcp.WithToolTitle("List files"),
		mcp.WithDescription("List a directory in a sandbox: names, types, sizes, permissions and modification times. "+
			"The path is relative to /workspace unless absolute; default /workspace. "+
			"depth 1 (default) lists the directory itself; a larger depth recurses and also draws a tree, like the tree command."),
		readOnly,
		sandboxArg(),
		mcp.WithString("path", mcp.Description("Directory to list, relative to /workspace unless absolute. Default /workspace.")),
		mcp.WithInteger("depth", mcp.Min(1), mcp.Max(maxListDepth), mcp.DefaultNumber(1),
			mcp.Description(fmt.Sprintf("How many levels to descend: 1 (default) for the directory's own entries, up to %d.", maxListDepth))),
		mcp.WithBoolean("all", mcp.DefaultBool(false), mcp.Description("Include hidden entries (names starting with a dot). Default false.")),
		mcp.WithInteger("offset", mcp.Min(0), mcp.DefaultNumber(0),
			mcp.Description("Skip this many entries: pass the next_offset of the previous reply to get the rest of a long listing. Default 0.")),
		mcp.WithOutputSchema[fileListing](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		dir := c.string("path")
		depth := c.integer("depth", 1)
		if depth < 1 || depth > maxListDepth {
			c.fail("Argument \"depth\" must be between 1 and %d (got %d).", maxListDepth, depth)
		}
		all := c.boolean("all", false)
		offset := c.integer("offset", 0)
		if err := c.problem(); err != nil {
			return nil, err
		}
		listing, err := b.ListFiles(c.ctx, c.owner, ref, dir, int(depth), all)
		if err != nil {
			return nil, err
		}
		var next int
		listing.Entries, next = pageListing(listing.Entries, int(offset))
		out := fileListing{Path: listing.Path, Entries: make([]fileEntry, 0, len(listing.Entries)), NextOffset: next}
		for _, e := range listing.Entries {
			out.Entries = append(out.Entries, fileEntry{
				Path: e.Path, Type: e.Type, Size: e.Size, Mode: e.Mode,
				ModTime: e.ModTime.UTC().Format(time.RFC3339), Target: e.Target,
			})
		}
		more := ""
		if out.NextOffset > 0 {
			more = fmt.Sprintf("\n[more entries left out; call list_files with offset=%d for the next ones]", out.NextOffset)
		}
		if depth > 1 {
			out.Tree = withNote(renderTree(listing), "")
			return structured(out, withNote(out.Tree, more)), nil
		}
		return structured(out, withNote(renderList(listing), more)), nil
	})
}

// pageListing is the entries from offset on that fit in one reply (at least
// one), and the offset of the first one left out (0 when none is).
func pageListing(entries []sandbox.FileEntry, offset int) ([]sandbox.FileEntry, int) {
	if offset >= len(entries) {
		return nil, 0
	}
	used := 0
	for i := offset; i < len(entries); i++ {
		e := entries[i]
		used += max(jsonSize(e), len(e.Path)+len(e.Target)) + itemOverhead
		if used > replyBudget && i > offset {
			return entries[offset:i], i
		}
	}
	return entries[offset:], 0
}

// renderList renders one directory level like `ls -l`.
func renderList(l sandbox.Listing) string {
	if len(l.Entries) == 0 {
		return l.Path + " is empty."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", l.Path)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, e := range l.Entries {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", e.Type, e.Mode, formatBytes(e.Size), e.ModTime.UTC().Format("2006-01-02 15:04"), displayName(e, e.Path))
	}
	w.Flush()
	return strings.TrimRight(b.String(), "\n")
}

// displayName marks directories with a slash and shows symlink targets.
func displayName(e sandbox.FileEntry, name string) string {
	switch e.Type {
	case "dir":
		return name + "/"
	case "symlink":
		return name + " -> " + e.Target
	}
	return name
}

// treeNode is a directory entry with its children, for renderTree.
type treeNode struct {
	entry    sandbox.FileEntry
	children []*treeNode
}

// renderTree draws a recursive listing the way the tree command does.
func renderTree(l sandbox.Listing) string {
	root := &treeNode{}
	nodes := map[string]*treeNode{".": root}
	var nodeFor func(p string) *treeNode
	nodeFor = func(p string) *treeNode {
		if n, ok := nodes[p]; ok {
			return n
		}
		// A parent missing from the listing is drawn as a plain directory.
		n := &treeNode{entry: sandbox.FileEntry{Path: p, Type: "dir"}}
		nodes[p] = n
		parent := nodeFor(path.Dir(p))
		parent.children = append(parent.children, n)
		return n
	}
	dirs, files := 0, 0
	for _, e := range l.Entries {
		p := path.Clean(e.Path)
		if n, ok := nodes[p]; ok {
			n.entry = e
		} else {
			n := &treeNode{entry: e}
			nodes[p] = n
			parent := nodeFor(path.Dir(p))
			parent.children = append(parent.children, n)
		}
		if e.Type == "dir" {
			dirs++
		} else {
			files++
		}
	}
	var b strings.Builder
	b.WriteString(l.Path + "\n")
	drawChildren(&b, root, "")
	fmt.Fprintf(&b, "\n%d %s, %d %s", dirs, plural(dirs, "directory", "directories"), files, plural(files, "file", "files"))
	return b.String()
}

func drawChildren(b *strings.Builder, n *treeNode, indent string) {
	for i, child := range n.children {
		branch, next := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, next = "└── ", "    "
		}
		b.WriteString(indent + branch + displayName(child.entry, path.Base(child.entry.Path)) + "\n")
		drawChildren(b, child, indent+next)
	}
}
