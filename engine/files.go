package engine

import (
	"context"
	"fmt"

	"github.com/sandtray/sandtray/engine/internal/files"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The file tools (write_file, read_file, make_directory, list_files) are
// engine/internal/files'; the engine resolves the sandbox, keeps it busy and
// records the activity.

// fileTarget is b as the file tools see it.
func (e *Engine) fileTarget(b *box) files.Target {
	return files.Target{ID: b.id, Name: b.name, Workdir: b.spec.Workdir, User: b.spec.User,
		Gone: func(err error) error { return e.gone(b, err) }}
}

// WriteFile writes one file into a sandbox, creating missing parent folders.
func (e *Engine) WriteFile(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.WriteRequest) (sandbox.FileContent, error) {
	if req.Path == "" {
		return sandbox.FileContent{}, fmt.Errorf("path is empty; give a file path such as \"src/main.py\": %w", sandbox.ErrInvalid)
	}
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	defer done()
	t := e.fileTarget(b)
	p := t.Path(req.Path)
	if p == "/" || isDirPath(req.Path) {
		return sandbox.FileContent{}, fmt.Errorf("path %q names a folder; give a file name: %w", req.Path, sandbox.ErrInvalid)
	}
	mode := req.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	err = e.files.Write(ctx, t, p, req.Data, mode)
	e.record(b.id, activityFor("write_file", owner, p, err, fmt.Sprintf("%d bytes", len(req.Data))))
	if err != nil {
		return sandbox.FileContent{}, err
	}
	return sandbox.FileContent{Path: p, Size: int64(len(req.Data))}, nil
}

// MakeDirectory creates a folder (and its parents) inside a sandbox.
func (e *Engine) MakeDirectory(ctx context.Context, owner sandbox.Owner, ref, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("path is empty: %w", sandbox.ErrInvalid)
	}
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		return "", err
	}
	defer done()
	t := e.fileTarget(b)
	abs := t.Path(p)
	err = e.files.Mkdir(ctx, t, abs)
	e.record(b.id, activityFor("make_directory", owner, abs, err, ""))
	return abs, err
}

// ReadFile reads up to limit bytes of a file from offset (limit <= 0 means
// the configured maximum). A symlink is followed inside the sandbox.
func (e *Engine) ReadFile(ctx context.Context, owner sandbox.Owner, ref, p string, offset, limit int64) (sandbox.FileContent, error) {
	maxRead := e.cfg.Limits.ReadFileBytes
	if offset < 0 {
		return sandbox.FileContent{}, fmt.Errorf("offset must not be negative: %w", sandbox.ErrInvalid)
	}
	if limit <= 0 || limit > maxRead {
		limit = maxRead
	}
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	defer done()
	t := e.fileTarget(b)
	return e.files.Read(ctx, t, t.Path(p), offset, limit)
}

// ListFiles lists a folder inside a sandbox to depth levels (1: just its
// entries). Hidden entries are skipped unless all is set.
func (e *Engine) ListFiles(ctx context.Context, owner sandbox.Owner, ref, p string, depth int, all bool) (sandbox.Listing, error) {
	if depth > files.MaxListDepth {
		return sandbox.Listing{}, fmt.Errorf("depth %d is too deep; use at most %d: %w", depth, files.MaxListDepth, sandbox.ErrInvalid)
	}
	b, done, err := e.readyForFiles(ctx, ref)
	if err != nil {
		return sandbox.Listing{}, err
	}
	defer done()
	if p == "" {
		p = "."
	}
	t := e.fileTarget(b)
	return e.files.List(ctx, t, t.Path(p), depth, all)
}

func activityFor(tool string, owner sandbox.Owner, input string, err error, detail string) sandbox.Activity {
	a := sandbox.Activity{Tool: tool, Client: owner.Client, Input: input, Stdout: detail}
	if err != nil {
		a.Error = err.Error()
	}
	return a
}

func isDirPath(p string) bool { return len(p) > 0 && p[len(p)-1] == '/' }
