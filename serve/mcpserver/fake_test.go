package mcpserver

import (
	"context"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// fakeCall is one Backend call the fake saw.
type fakeCall struct {
	Method string
	Owner  sandbox.Owner
	Ref    string
	Req    any
}

// fakeBackend is an in-memory Backend: it records every call and answers
// with canned values, or with err when set.
type fakeBackend struct {
	mu      sync.Mutex
	calls   []fakeCall
	started []sandbox.Owner
	ended   []string
	endedCh chan string

	err      error
	info     sandbox.Info
	infos    []sandbox.Info
	outcome  sandbox.ExecOutcome
	job      sandbox.JobStatus
	file     sandbox.FileContent
	listing  sandbox.Listing
	copied   sandbox.CopyResult
	diff     sandbox.Diff
	activity []sandbox.Activity
	install  sandbox.InstallResult
	commit   sandbox.CommitResult
	export   sandbox.Export
	// onProgress runs inside Create, InstallPackages and Commit with their
	// caller and progress callback.
	onProgress func(sandbox.Owner, sandbox.Progress)
	// onExec, when set, runs ExecCommand in place of answering outcome.
	onExec func(ctx context.Context, owner sandbox.Owner, req sandbox.CommandRequest) sandbox.ExecOutcome
	// onCode, when set, runs inside ExecCode before it answers outcome.
	onCode func(ctx context.Context, req sandbox.CodeRequest)
}

func newFake() *fakeBackend {
	created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return &fakeBackend{
		endedCh: make(chan string, 64),
		info: sandbox.Info{
			ID: "0123456789abcdef0123", Name: "calm-otter", Image: "python:3.12-slim",
			Status: sandbox.StatusRunning, CreatedAt: created,
			Owner: sandbox.Owner{Session: "s1", Client: "claude-ai 0.1.0"},
			Spec:  sandbox.Spec{Workdir: "/workspace", Network: sandbox.NetworkNone},
			Stats: sandbox.Stats{CPUPercent: 12.5, MemoryBytes: 42 << 20},
		},
	}
}

func (f *fakeBackend) record(method string, owner sandbox.Owner, ref string, req any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Method: method, Owner: owner, Ref: ref, Req: req})
	return f.err
}

// lastCall returns the most recent call, or a zero fakeCall.
func (f *fakeBackend) lastCall() fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return fakeCall{}
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeBackend) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeBackend) sessionsStarted() []sandbox.Owner {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sandbox.Owner(nil), f.started...)
}

func (f *fakeBackend) SessionStarted(owner sandbox.Owner) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, owner)
}

func (f *fakeBackend) SessionEnded(session string) {
	f.mu.Lock()
	f.ended = append(f.ended, session)
	f.mu.Unlock()
	f.endedCh <- session
}

func (f *fakeBackend) Create(_ context.Context, owner sandbox.Owner, req sandbox.CreateRequest, progress sandbox.Progress) (sandbox.Info, error) {
	if f.onProgress != nil {
		f.onProgress(owner, progress)
	}
	return f.info, f.record("Create", owner, "", req)
}

func (f *fakeBackend) List(context.Context) ([]sandbox.Info, error) {
	return f.infos, f.record("List", sandbox.Owner{}, "", nil)
}

func (f *fakeBackend) Stop(_ context.Context, owner sandbox.Owner, ref string) (sandbox.Info, error) {
	return f.info, f.record("Stop", owner, ref, nil)
}

func (f *fakeBackend) Delete(_ context.Context, owner sandbox.Owner, ref string) error {
	return f.record("Delete", owner, ref, nil)
}

func (f *fakeBackend) SetPersistent(_ context.Context, owner sandbox.Owner, ref string, persistent bool) (sandbox.Info, error) {
	info := f.info
	info.Persistent = persistent
	return info, f.record("SetPersistent", owner, ref, persistent)
}

func (f *fakeBackend) ExecCommand(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommandRequest) (sandbox.ExecOutcome, error) {
	err := f.record("ExecCommand", owner, ref, req)
	if f.onExec != nil {
		return f.onExec(ctx, owner, req), err
	}
	return f.outcome, err
}

func (f *fakeBackend) ExecCode(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CodeRequest) (sandbox.ExecOutcome, error) {
	if f.onCode != nil {
		f.onCode(ctx, req)
	}
	return f.outcome, f.record("ExecCode", owner, ref, req)
}

func (f *fakeBackend) JobStatus(_ context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	return f.job, f.record("JobStatus", sandbox.Owner{}, jobID, since)
}

func (f *fakeBackend) JobStop(_ context.Context, jobID string) (sandbox.JobStatus, error) {
	return f.job, f.record("JobStop", sandbox.Owner{}, jobID, nil)
}

func (f *fakeBackend) WriteFile(_ context.Context, owner sandbox.Owner, ref string, req sandbox.WriteRequest) (sandbox.FileContent, error) {
	written := sandbox.FileContent{Path: "/workspace/" + req.Path, Size: int64(len(req.Data))}
	return written, f.record("WriteFile", owner, ref, req)
}

// readArgs is what ReadFile was asked for.
type readArgs struct {
	Path          string
	Offset, Limit int64
}

func (f *fakeBackend) ReadFile(_ context.Context, owner sandbox.Owner, ref, path string, offset, limit int64) (sandbox.FileContent, error) {
	return f.file, f.record("ReadFile", owner, ref, readArgs{path, offset, limit})
}

// listArgs is what ListFiles was asked for.
type listArgs struct {
	Path  string
	Depth int
	All   bool
}

func (f *fakeBackend) ListFiles(_ context.Context, owner sandbox.Owner, ref, path string, depth int, all bool) (sandbox.Listing, error) {
	return f.listing, f.record("ListFiles", owner, ref, listArgs{path, depth, all})
}

func (f *fakeBackend) MakeDirectory(_ context.Context, owner sandbox.Owner, ref, path string) (string, error) {
	return "/workspace/" + path, f.record("MakeDirectory", owner, ref, path)
}

// copyArgs is what a copy was asked for.
type copyArgs struct{ From, To string }

func (f *fakeBackend) CopyToSandbox(_ context.Context, owner sandbox.Owner, ref, hostPath, path string) (sandbox.CopyResult, error) {
	return f.copied, f.record("CopyToSandbox", owner, ref, copyArgs{hostPath, path})
}

func (f *fakeBackend) CopyFromSandbox(_ context.Context, owner sandbox.Owner, ref, path, hostPath string) (sandbox.CopyResult, error) {
	return f.copied, f.record("CopyFromSandbox", owner, ref, copyArgs{path, hostPath})
}

func (f *fakeBackend) Diff(_ context.Context, owner sandbox.Owner, ref, path string) (sandbox.Diff, error) {
	return f.diff, f.record("Diff", owner, ref, path)
}

func (f *fakeBackend) Logs(_ context.Context, ref string, tail int) ([]sandbox.Activity, error) {
	return f.activity, f.record("Logs", sandbox.Owner{}, ref, tail)
}

func (f *fakeBackend) InstallPackages(_ context.Context, owner sandbox.Owner, ref string, req sandbox.InstallRequest, progress sandbox.Progress) (sandbox.InstallResult, error) {
	if f.onProgress != nil {
		f.onProgress(owner, progress)
	}
	return f.install, f.record("InstallPackages", owner, ref, req)
}

func (f *fakeBackend) Commit(_ context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	if f.onProgress != nil {
		f.onProgress(owner, progress)
	}
	return f.commit, f.record("Commit", owner, ref, req)
}

func (f *fakeBackend) ExportDockerfile(_ context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) {
	return f.export, f.record("ExportDockerfile", owner, ref, hostPath)
}
