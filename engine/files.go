package engine

import (
	"context"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/jobs"

	"github.com/sandtray/sandtray/engine/internal/files"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The file tools (write_file, read_file, make_directory, list_files) are
// engine/internal/files'; the engine resolves the sandbox, keeps it busy and
// records the activity.

// appOwner is who the app's own calls (its save dialogs) are logged for.
var appOwner = sandbox.Owner{Client: "Sandtray app"}

// withFiles runs do on the sandbox ref names, held for the file, copy and
// export tools (see readyForFiles). It is a function because methods have
// no type parameters.
func withFiles[T any](ctx context.Context, e *Engine, ref string, do func(boxTarget) (T, error)) (T, error) {
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		var none T
		return none, err
	}
	defer done()
	return do(boxTarget{e, b})
}

// log records in the sandbox's activity log what tool did for owner.
func (t boxTarget) log(tool string, owner sandbox.Owner) func(input string, err error, detail string) {
	return func(input string, err error, detail string) {
		a := sandbox.Activity{Tool: tool, Client: owner.Client, Input: input, Stdout: detail}
		if err != nil {
			a.Error = err.Error()
		}
		t.e.record(t.b.id, a)
	}
}

// WriteFile writes one file into a sandbox, creating missing parent folders.
func (e *Engine) WriteFile(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.WriteRequest) (sandbox.FileContent, error) {
	if err := files.CheckWrite(req); err != nil {
		return sandbox.FileContent{}, err
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.FileContent, error) {
		return e.files.WriteFile(ctx, t, req, t.log("write_file", owner))
	})
}

// MakeDirectory creates a folder (and its parents) inside a sandbox.
func (e *Engine) MakeDirectory(ctx context.Context, owner sandbox.Owner, ref, p string) (string, error) {
	if err := files.CheckMkdir(p); err != nil {
		return "", err
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (string, error) {
		return e.files.MakeDirectory(ctx, t, p, t.log("make_directory", owner))
	})
}

// ReadFile reads up to limit bytes of a file from offset (limit <= 0 means
// the configured maximum). A symlink is followed inside the sandbox.
func (e *Engine) ReadFile(ctx context.Context, owner sandbox.Owner, ref, p string, offset, limit int64) (sandbox.FileContent, error) {
	limit, err := files.CheckRead(offset, limit, e.cfg().Limits.ReadFileBytes)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.FileContent, error) {
		return e.files.Read(ctx, t, files.Path(t, p), offset, limit)
	})
}

// ListFiles lists a folder inside a sandbox to depth levels (1: just its
// entries). Hidden entries are skipped unless all is set.
func (e *Engine) ListFiles(ctx context.Context, owner sandbox.Owner, ref, p string, depth int, all bool) (sandbox.Listing, error) {
	if err := files.CheckList(depth); err != nil {
		return sandbox.Listing{}, err
	}
	if p == "" {
		p = "."
	}
	return withFiles(ctx, e, ref, func(t boxTarget) (sandbox.Listing, error) {
		return e.files.List(ctx, t, files.Path(t, p), depth, all)
	})
}

// The jobs are engine/internal/jobs' part, embedded in the Engine through
// this alias so its methods are the engine's; toolHost is the engine as it
// reaches it (jobs.Host).
type jobsPart = jobs.Service

// toolHost is the engine as the jobs see it.
type toolHost struct{ e *Engine }

func (h toolHost) Record(id string, a sandbox.Activity) { h.e.record(id, a) }
func (h toolHost) Config() *config.Config               { return &h.e.cfg().Config }
