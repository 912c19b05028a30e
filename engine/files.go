package engine

import (
	"context"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/capture"
	"github.com/sandtray/sandtray/engine/internal/files"
	"github.com/sandtray/sandtray/engine/internal/jobs"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The file, capture and jobs tools are the parts of engine/internal/files,
// capture and jobs, embedded in the Engine through these aliases so their
// methods are the engine's; toolHost is the engine as they reach it (their
// Host interfaces).
type (
	filesPart   = files.Service
	capturePart = capture.Service
	jobsPart    = jobs.Service
)

// toolHost is the engine as the file, capture and jobs tools see it.
type toolHost struct{ e *Engine }

func (h toolHost) Record(id string, a sandbox.Activity) { h.e.record(id, a) }
func (h toolHost) Config() *config.Config               { return &h.e.cfg().Config }

// Hold is ready for the file, copy and export tools: their work counts as
// a call. It waits while an install holds the sandbox online (list_files
// and make_directory run the sandbox's own programs), an install waits for
// it to end, and the disk watch between calls leaves the sandbox alone
// meanwhile (what it writes is the caller's, not a hidden process's). done
// releases all of it.
func (h toolHost) Hold(ctx context.Context, ref string) (sandbox.Handle, func(), error) {
	e := h.e
	b, err := e.ready(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	leave, err := e.reg.EnterCall(ctx, b, func(error) {}, nil)
	if err != nil {
		e.release(b)
		return nil, nil, err
	}
	b.Disk.CallStarted()
	return boxTarget{e, b}, func() {
		b.Disk.CallEnded()
		leave()
		e.releaseSoon(b) // a file tool changes the last use alone: saved off its path
	}, nil
}

// log records in the sandbox's activity log what tool did for owner.
func (t boxTarget) log(tool string, owner sandbox.Owner) func(input string, err error, detail string) {
	return files.LogTo(t.e.record, t, tool, owner)
}
