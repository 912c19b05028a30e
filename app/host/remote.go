//go:build cgo

package host

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/control"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/ui"
)

// remote is the UI's backend for an app attached to an engine another
// process runs: each call is a request on the engine's control endpoint
// (guiserve.go is the other side), on a connection of its own, so a long
// call (a save, a commit) never holds up the others.
type remote struct {
	dial  func(ctx context.Context) (*control.Client, error)
	hints chan func(ctx context.Context) // SetPaused, ShowStats, FollowStats: in order, never blocking the caller
}

// remoteCallTimeout bounds the calls whose signature has no context.
const remoteCallTimeout = 10 * time.Second

// newRemote returns the backend; its hints are sent until ctx is done.
func newRemote(ctx context.Context, dial func(ctx context.Context) (*control.Client, error)) *remote {
	r := &remote{dial: dial, hints: make(chan func(context.Context), 64)}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case f := <-r.hints:
				f(ctx)
			}
		}
	}()
	return r
}

// call sends one request on a connection of its own.
func (r *remote) call(ctx context.Context, method string, p guiParams, out any) error {
	c, err := r.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Call(ctx, method, p, out)
}

// hint sends a request whose answer nobody waits for (a full queue drops
// it: the UI sends the next one soon).
func (r *remote) hint(method string, p guiParams) {
	select {
	case r.hints <- func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, remoteCallTimeout)
		defer cancel()
		_ = r.call(ctx, method, p, nil)
	}:
	default:
	}
}

// Watch follows the engine's snapshots over a stream; when the stream
// breaks, Next says so and the next Next opens it again.
func (r *remote) Watch(ctx context.Context) ui.Snapshots {
	s := &remoteSnaps{wake: make(chan struct{}, 1)}
	go func() {
		for ctx.Err() == nil {
			c, err := r.dial(ctx)
			if err == nil {
				err = c.Stream(ctx, methodWatch, nil, func(raw json.RawMessage) error {
					var snap sandbox.Snapshot
					if err := json.Unmarshal(raw, &snap); err != nil {
						return err
					}
					s.put(&snap, nil)
					return nil
				})
				c.Close()
			}
			s.put(nil, err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return s
}

// remoteSnaps keeps the newest snapshot (or error) for Next.
type remoteSnaps struct {
	mu     sync.Mutex
	latest *sandbox.Snapshot
	err    error
	wake   chan struct{}
}

func (s *remoteSnaps) put(snap *sandbox.Snapshot, err error) {
	s.mu.Lock()
	if snap != nil {
		s.latest = snap
	} else {
		s.err = err
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *remoteSnaps) Next(ctx context.Context) (sandbox.Snapshot, error) {
	for {
		s.mu.Lock()
		if snap := s.latest; snap != nil {
			s.latest = nil
			s.mu.Unlock()
			return *snap, nil
		}
		if err := s.err; err != nil {
			s.err = nil
			s.mu.Unlock()
			return sandbox.Snapshot{}, err
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return sandbox.Snapshot{}, ctx.Err()
		}
	}
}

func (r *remote) Logs(ctx context.Context, ref string, tail int) ([]sandbox.Activity, error) {
	var out []sandbox.Activity
	return out, r.call(ctx, methodLogs, guiParams{Ref: ref, Tail: tail}, &out)
}

func (r *remote) ListFiles(ctx context.Context, owner sandbox.Owner, ref, path string, depth int, all bool) (sandbox.Listing, error) {
	var out sandbox.Listing
	return out, r.call(ctx, methodListFiles, guiParams{Owner: owner, Ref: ref, Path: path, Depth: depth, All: all}, &out)
}

func (r *remote) ReadFile(ctx context.Context, owner sandbox.Owner, ref, path string, offset, limit int64) (sandbox.FileContent, error) {
	var out sandbox.FileContent
	return out, r.call(ctx, methodReadFile, guiParams{Owner: owner, Ref: ref, Path: path, Offset: offset, Limit: limit}, &out)
}

func (r *remote) SaveFiles(ctx context.Context, ref, path, hostPath string) (sandbox.CopyResult, error) {
	var out sandbox.CopyResult
	return out, r.call(ctx, methodSaveFiles, guiParams{Ref: ref, Path: path, HostPath: hostPath}, &out)
}

func (r *remote) Stop(ctx context.Context, owner sandbox.Owner, ref string) (sandbox.Info, error) {
	var out sandbox.Info
	return out, r.call(ctx, methodStop, guiParams{Owner: owner, Ref: ref}, &out)
}

func (r *remote) Kill(ctx context.Context, ref string) error {
	return r.call(ctx, methodKill, guiParams{Ref: ref}, nil)
}

func (r *remote) Delete(ctx context.Context, owner sandbox.Owner, ref string) error {
	return r.call(ctx, methodDelete, guiParams{Owner: owner, Ref: ref}, nil)
}

func (r *remote) SetPersistent(ctx context.Context, owner sandbox.Owner, ref string, persistent bool) (sandbox.Info, error) {
	var out sandbox.Info
	return out, r.call(ctx, methodSetPersistent, guiParams{Owner: owner, Ref: ref, Persistent: persistent}, &out)
}

func (r *remote) Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	var out sandbox.CommitResult
	c, err := r.dial(ctx)
	if err != nil {
		return out, err
	}
	defer c.Close()
	return out, c.CallStream(ctx, methodCommit, guiParams{Owner: owner, Ref: ref, Commit: req}, func(raw json.RawMessage) error {
		var p guiProgress
		if err := json.Unmarshal(raw, &p); err == nil && progress != nil {
			progress(p.Current, p.Total, p.Message)
		}
		return nil
	}, &out)
}

func (r *remote) ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) {
	var out sandbox.Export
	return out, r.call(ctx, methodExport, guiParams{Owner: owner, Ref: ref, HostPath: hostPath}, &out)
}

func (r *remote) SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error) {
	var out sandbox.Export
	return out, r.call(ctx, methodSaveDockerfile, guiParams{Ref: ref, HostPath: hostDir}, &out)
}

func (r *remote) SetPaused(paused bool) { r.hint(methodSetPaused, guiParams{Paused: paused}) }

func (r *remote) StopEphemeral(ctx context.Context) error {
	return r.call(ctx, methodStopEphemeral, guiParams{}, nil)
}

func (r *remote) Jobs(sandboxID string) []sandbox.JobInfo {
	ctx, cancel := context.WithTimeout(context.Background(), remoteCallTimeout)
	defer cancel()
	var out []sandbox.JobInfo
	_ = r.call(ctx, methodJobs, guiParams{Ref: sandboxID}, &out)
	return out
}

func (r *remote) JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	var out sandbox.JobStatus
	return out, r.call(ctx, methodJobStatus, guiParams{JobID: jobID, Since: since}, &out)
}

func (r *remote) JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error) {
	var out sandbox.JobStatus
	return out, r.call(ctx, methodJobStop, guiParams{JobID: jobID}, &out)
}

// ShowStats and FollowStats are the UI's StatsDemand.
func (r *remote) ShowStats(ids []string) { r.hint(methodShowStats, guiParams{IDs: ids}) }
func (r *remote) FollowStats(id string)  { r.hint(methodFollowStats, guiParams{Ref: id}) }

// GPUStatus is what the UI's Ports tab asks about GPUs.
func (r *remote) GPUStatus(ctx context.Context) sandbox.GPUStatus {
	var out sandbox.GPUStatus
	_ = r.call(ctx, methodGPUStatus, guiParams{}, &out)
	return out
}

// The egress gate's methods, over the control endpoint's own.

func (r *remote) EgressPending() []sandbox.EgressPending {
	ctx, cancel := context.WithTimeout(context.Background(), remoteCallTimeout)
	defer cancel()
	var out []sandbox.EgressPending
	_ = r.call(ctx, control.MethodPending, guiParams{}, &out)
	return out
}

func (r *remote) AnswerEgress(ctx context.Context, id string, a sandbox.EgressAnswer) error {
	c, err := r.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Answer(ctx, id, a)
}

func (r *remote) AnswerEgressHost(ctx context.Context, ref, target string, a sandbox.EgressAnswer) (int, error) {
	c, err := r.dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.AnswerHost(ctx, ref, target, a)
}

func (r *remote) EgressNetwork(ctx context.Context, ref string) (sandbox.EgressNetwork, error) {
	c, err := r.dial(ctx)
	if err != nil {
		return sandbox.EgressNetwork{}, err
	}
	defer c.Close()
	return c.Network(ctx, ref)
}

// remoteImages is the first-run screen's Images over the control endpoint.
type remoteImages struct{ r *remote }

func (i remoteImages) DefaultImage(ctx context.Context) (ui.ImageState, error) {
	var st imageState
	err := i.r.call(ctx, methodImageState, guiParams{}, &st)
	out := ui.ImageState{Ref: st.State.Ref, Present: st.State.Present, Buildable: st.State.Builtin}
	if b := st.Build; b != nil {
		out.Step, out.Done, out.Total, out.Bytes = b.Step, b.Done, b.Total, b.Bytes
	}
	return out, err
}

func (i remoteImages) BuildDefaultImage(ctx context.Context, progress func(ui.ImageState)) error {
	c, err := i.r.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.CallStream(ctx, methodImageBuild, nil, func(raw json.RawMessage) error {
		var p engine.ImageBuildProgress
		if err := json.Unmarshal(raw, &p); err == nil {
			progress(ui.ImageState{Step: p.Step, Done: p.Done, Total: p.Total, Bytes: p.Bytes})
		}
		return nil
	}, nil)
}

var (
	_ ui.Backend     = (*remote)(nil)
	_ ui.StatsDemand = (*remote)(nil)
	_ ui.Images      = remoteImages{}
)
