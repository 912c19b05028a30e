package files

import (
	"context"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// API is what this part gives the Engine's callers: the file and copy tools.
// Package engine promotes these methods, and only these, onto
// *engine.Engine; the rest of the part's exported methods are the engine's
// centre's to call.
type API interface {
	WriteFile(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.WriteRequest) (sandbox.FileContent, error)
	MakeDirectory(ctx context.Context, owner sandbox.Owner, ref, p string) (string, error)
	ReadFile(ctx context.Context, owner sandbox.Owner, ref, p string, offset, limit int64) (sandbox.FileContent, error)
	ListFiles(ctx context.Context, owner sandbox.Owner, ref, p string, depth int, all bool) (sandbox.Listing, error)
	CopyToSandbox(ctx context.Context, owner sandbox.Owner, ref, hostPath, dest string) (sandbox.CopyResult, error)
	CopyFromSandbox(ctx context.Context, owner sandbox.Owner, ref, p, hostPath string) (sandbox.CopyResult, error)
	SaveFiles(ctx context.Context, ref, p, hostPath string) (sandbox.CopyResult, error)
}
