package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The Check functions refuse a tool's bad arguments before the engine looks
// its sandbox up.

// CheckWrite checks a write_file request.
func CheckWrite(req sandbox.WriteRequest) error {
	if req.Path == "" {
		return fmt.Errorf("path is empty; give a file path such as \"src/main.py\": %w", sandbox.ErrInvalid)
	}
	return nil
}

// CheckMkdir checks a make_directory request.
func CheckMkdir(p string) error {
	if p == "" {
		return fmt.Errorf("path is empty: %w", sandbox.ErrInvalid)
	}
	return nil
}

// CheckRead checks a read_file request's offset, and returns its limit:
// at most maxRead (limits.read_file_bytes), which a limit <= 0 means.
func CheckRead(offset, limit, maxRead int64) (int64, error) {
	if offset < 0 {
		return 0, fmt.Errorf("offset must not be negative: %w", sandbox.ErrInvalid)
	}
	if limit <= 0 || limit > maxRead {
		limit = maxRead
	}
	return limit, nil
}

// CheckList checks a list_files request's depth.
func CheckList(depth int) error {
	if depth > MaxListDepth {
		return fmt.Errorf("depth %d is too deep; use at most %d: %w", depth, MaxListDepth, sandbox.ErrInvalid)
	}
	return nil
}

// WriteFile is write_file: it writes req.Data to req.Path (relative to the
// workdir) in t, creating missing parent folders, with req.Mode's
// permissions (0644 when it has none), and tells log.
func (f *Files) WriteFile(ctx context.Context, t sandbox.Handle, req sandbox.WriteRequest, log Log) (sandbox.FileContent, error) {
	p := Path(t, req.Path)
	if p == "/" || strings.HasSuffix(req.Path, "/") {
		return sandbox.FileContent{}, fmt.Errorf("path %q names a folder; give a file name: %w", req.Path, sandbox.ErrInvalid)
	}
	mode := req.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	err := f.Write(ctx, t, p, req.Data, mode)
	log(p, err, fmt.Sprintf("%d bytes", len(req.Data)))
	if err != nil {
		return sandbox.FileContent{}, err
	}
	return sandbox.FileContent{Path: p, Size: int64(len(req.Data))}, nil
}

// MakeDirectory is make_directory: it creates p (relative to the workdir)
// and its parents in t, tells log, and returns the folder's absolute path.
func (f *Files) MakeDirectory(ctx context.Context, t sandbox.Handle, p string, log Log) (string, error) {
	abs := Path(t, p)
	err := f.Mkdir(ctx, t, abs)
	log(abs, err, "")
	return abs, err
}
