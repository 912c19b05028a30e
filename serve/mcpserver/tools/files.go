package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Files is what write_file, read_file, list_files and make_directory need
// from the engine.
type Files interface {
	// WriteFile writes one file; the result has Path and Size set, Data empty.
	WriteFile(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.WriteRequest) (sandbox.FileContent, error)
	// ReadFile reads up to limit bytes from offset (limit 0: the engine's cap).
	ReadFile(ctx context.Context, owner sandbox.Owner, ref, path string, offset, limit int64) (sandbox.FileContent, error)
	// ListFiles lists a directory to the given depth (1: its entries only).
	ListFiles(ctx context.Context, owner sandbox.Owner, ref, path string, depth int, all bool) (sandbox.Listing, error)
	// MakeDirectory creates a directory and its parents, returning its absolute path.
	MakeDirectory(ctx context.Context, owner sandbox.Owner, ref, path string) (string, error)
}

// FileTools are write_file, read_file, list_files and make_directory.
func FileTools(k *Kit, b Files) []server.ServerTool {
	return toolSet(k, b, writeFile, readFile, listFiles, makeDirectory)
}

// File content encodings.
const (
	encodingUTF8   = "utf8"
	encodingBase64 = "base64"
)

var (
	encodings       = []string{encodingUTF8, encodingBase64}
	encodingAliases = map[string]string{"utf-8": encodingUTF8, "text": encodingUTF8}
)

// fileWritten is write_file's result.
type fileWritten struct {
	Path string `json:"path" jsonschema:"The absolute path written."`
	Size int64  `json:"size" jsonschema:"The file's size in bytes."`
}

func writeFile(k *Kit, b Files) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("write_file",
		mcp.WithToolTitle("Write file"),
		mcp.WithDescription("Create or overwrite a file in a sandbox, creating missing parent directories. "+
			"The path is relative to /workspace unless absolute. Text goes in as is (encoding utf8, the default); "+
			"binary content must be base64-encoded with encoding base64."),
		// Destructive: it replaces an existing file without asking, and the
		// old content is gone. Idempotent: the same call twice leaves the
		// same file.
		hints(false, true, true, false),
		sandboxArg(),
		mcp.WithString("path", mcp.Required(), mcp.Description("File path, relative to /workspace unless absolute, e.g. \"src/main.py\".")),
		mcp.WithString("content", mcp.Required(), mcp.Description("The whole new content of the file.")),
		mcp.WithString("encoding", mcp.Enum(encodings...), mcp.DefaultString(encodingUTF8),
			mcp.Description("How content is encoded: \"utf8\" (default, plain text) or \"base64\" (binary data).")),
		mcp.WithString("mode", mcp.Pattern("^0?[0-7]{3,4}$"),
			mcp.Description("Permission bits as an octal string, e.g. \"0755\" for an executable script. Default \"0644\".")),
		mcp.WithOutputSchema[fileWritten](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		req := sandbox.WriteRequest{Path: c.required("path"), Mode: c.fileMode("mode")}
		content := c.string("content")
		if !c.present("content") {
			c.fail("Missing required argument \"content\"; pass \"\" to create an empty file.")
		}
		req.Data = c.decode(content, c.oneOf("encoding", encodingUTF8, encodings, encodingAliases))
		if err := c.problem(); err != nil {
			return nil, err
		}
		written, err := b.WriteFile(c.ctx, c.owner, ref, req)
		if err != nil {
			return nil, err
		}
		out := fileWritten{Path: written.Path, Size: written.Size}
		return structured(out, fmt.Sprintf("Wrote %s to %s.", formatBytes(written.Size), written.Path)), nil
	})
}

// fileMode parses an octal permission string such as "0755".
func (c *call) fileMode(name string) fs.FileMode {
	s := strings.TrimSpace(c.string(name))
	if s == "" {
		return 0
	}
	bits, err := strconv.ParseUint(s, 8, 32)
	if err != nil || bits > 0o7777 {
		c.fail("Argument %q must be an octal permission string like \"0644\" or \"0755\", not %q.", name, s)
		return 0
	}
	mode := fs.FileMode(bits & 0o777)
	// Unix setuid, setgid and sticky bits live elsewhere in fs.FileMode.
	for bit, flag := range map[uint64]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if bits&bit != 0 {
			mode |= flag
		}
	}
	return mode
}

// decode turns content in the given encoding into bytes.
func (c *call) decode(content, encoding string) []byte {
	if encoding != encodingBase64 {
		return []byte(content)
	}
	// Models often wrap base64 lines or drop the padding; both are harmless.
	compact := strings.Join(strings.Fields(content), "")
	data, err := base64.StdEncoding.DecodeString(compact)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(compact, "="))
	}
	if err != nil {
		c.fail("content is not valid base64 (%v). Encode binary data with standard base64, or send text with encoding \"utf8\".", err)
	}
	return data
}

// fileRead is read_file's result.
type fileRead struct {
	Path      string `json:"path" jsonschema:"The absolute path read."`
	Content   string `json:"content" jsonschema:"The bytes read, as text (utf8) or base64."`
	Encoding  string `json:"encoding" jsonschema:"utf8 or base64: how content is encoded."`
	Size      int64  `json:"size" jsonschema:"The whole file's size in bytes."`
	Offset    int64  `json:"offset" jsonschema:"The byte offset content starts at."`
	Length    int64  `json:"length" jsonschema:"How many bytes of the file content holds."`
	Truncated bool   `json:"truncated" jsonschema:"True when the file goes on after content; read on with offset set to offset+length."`
}

func readFile(k *Kit, b Files) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("read_file",
		mcp.WithToolTitle("Read file"),
		mcp.WithDescription("Read a file from a sandbox. The path is relative to /workspace unless absolute. "+
			"Text comes back as is (encoding utf8, the default); use encoding base64 for binary files. "+
			"Large files are cut at a size cap: read the rest with offset and limit."),
		readOnly,
		sandboxArg(),
		mcp.WithString("path", mcp.Required(), mcp.Description("File path, relative to /workspace unless absolute.")),
		mcp.WithString("encoding", mcp.Enum(encodings...), mcp.DefaultString(encodingUTF8),
			mcp.Description("\"utf8\" (default) for text, \"base64\" for binary data.")),
		mcp.WithInteger("offset", mcp.Min(0), mcp.DefaultNumber(0), mcp.Description("Byte offset to start reading at. Default 0.")),
		mcp.WithInteger("limit", mcp.Min(0), mcp.Description("Most bytes to return. Default: the configured cap.")),
		mcp.WithOutputSchema[fileRead](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		path := c.required("path")
		encoding := c.oneOf("encoding", encodingUTF8, encodings, encodingAliases)
		offset, limit := c.integer("offset", 0), c.integer("limit", 0)
		if err := c.problem(); err != nil {
			return nil, err
		}
		file, err := b.ReadFile(c.ctx, c.owner, ref, path, offset, limit)
		if err != nil {
			return nil, err
		}
		out := fileRead{Path: file.Path, Encoding: encoding, Size: file.Size, Offset: offset, Truncated: file.Truncated}
		data := file.Data
		if encoding == encodingBase64 {
			out.Content = base64.StdEncoding.EncodeToString(data)
		} else {
			if data, err = textOf(file); err != nil {
				return nil, err
			}
			out.Content = string(data)
		}
		out.Length = int64(len(data))
		out.Truncated = out.Truncated || out.Length < int64(len(file.Data))
		text := out.Content
		if out.Truncated {
			text += fmt.Sprintf("\n[showing bytes %d-%d of %d; read on with offset %d]", offset, offset+out.Length, file.Size, offset+out.Length)
		}
		return structured(out, text), nil
	})
}

// textOf returns the file's data as UTF-8 text. A read cut at the cap may
// end inside a character; that partial character is left for the next read.
func textOf(file sandbox.FileContent) ([]byte, error) {
	data := file.Data
	if file.Truncated {
		// Find the start of the last character; cut it if it is incomplete.
		for cut := 1; cut <= min(utf8.UTFMax-1, len(data)); cut++ {
			if tail := data[len(data)-cut:]; utf8.RuneStart(tail[0]) {
				if !utf8.FullRune(tail) {
					data = data[:len(data)-cut]
				}
				break
			}
		}
	}
	if !utf8.Valid(data) {
		return nil, &badArguments{msg: fmt.Sprintf("%s is not UTF-8 text (it looks binary); read it with encoding \"base64\".", file.Path)}
	}
	return data, nil
}

// directoryMade is make_directory's result.
type directoryMade struct {
	Path string `json:"path" jsonschema:"The absolute path of the directory."`
}

func makeDirectory(k *Kit, b Files) (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("make_directory",
		mcp.WithToolTitle("Make directory"),
		mcp.WithDescription("Create a directory in a sandbox, with any missing parents (like mkdir -p). "+
			"The path is relative to /workspace unless absolute. An existing directory is fine."),
		hints(false, false, true, false),
		sandboxArg(),
		mcp.WithString("path", mcp.Required(), mcp.Description("Directory path, relative to /workspace unless absolute.")),
		mcp.WithOutputSchema[directoryMade](),
	)
	return tool, k.handle(tool, func(c *call) (*mcp.CallToolResult, error) {
		ref := c.required("sandbox_id")
		path := c.required("path")
		if err := c.problem(); err != nil {
			return nil, err
		}
		made, err := b.MakeDirectory(c.ctx, c.owner, ref, path)
		if err != nil {
			return nil, err
		}
		return structured(directoryMade{Path: made}, fmt.Sprintf("Directory %s exists.", made)), nil
	})
}
