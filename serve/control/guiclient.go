package control

import (
	"context"
	"encoding/json"
	"net"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Dialer opens a connection to an engine's control endpoint: the socket
// (serve/socket's DialPrivate), or an in-memory pipe (Server.Pipe).
type Dialer func(ctx context.Context) (net.Conn, error)

// GUIClient is a window's side of the protocol: the methods of GUI, each a
// request on a connection of its own, so a long call (a save, a commit, a
// build) never holds up the others. It is what the app's window uses,
// whether the app runs the engine or attached to one.
type GUIClient struct {
	dial  Dialer
	hints chan func(ctx context.Context) // SetPaused, ShowStats, FollowStats: in order, never blocking the caller
}

// hintTimeout bounds the calls whose signature has no context.
const hintTimeout = 10 * time.Second

// NewGUIClient returns the client; its hints are sent until ctx is done.
func NewGUIClient(ctx context.Context, dial Dialer) *GUIClient {
	g := &GUIClient{dial: dial, hints: make(chan func(context.Context), 64)}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case f := <-g.hints:
				f(ctx)
			}
		}
	}()
	return g
}

// Call sends one request on a connection of its own: method with params,
// its result decoded into out (unless nil).
func (g *GUIClient) Call(ctx context.Context, method string, params, out any) error {
	conn, err := g.dial(ctx)
	if err != nil {
		return err
	}
	c := NewClient(conn)
	defer c.Close()
	return c.Call(ctx, method, params, out)
}

// callStream sends a method that reports progress (fn hears each event).
func (g *GUIClient) callStream(ctx context.Context, method string, p guiParams, fn func(json.RawMessage) error, out any) error {
	conn, err := g.dial(ctx)
	if err != nil {
		return err
	}
	c := NewClient(conn)
	defer c.Close()
	return c.CallStream(ctx, method, p, fn, out)
}

// get is a call whose result is a T.
func get[T any](ctx context.Context, g *GUIClient, method string, p guiParams) (T, error) {
	var out T
	err := g.Call(ctx, method, p, &out)
	return out, err
}

// hint sends a request whose answer nobody waits for (a full queue drops
// it: the window sends the next one soon).
func (g *GUIClient) hint(method string, p guiParams) {
	select {
	case g.hints <- func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, hintTimeout)
		defer cancel()
		_ = g.Call(ctx, method, p, nil)
	}:
	default:
	}
}

// quick is a call of a method whose signature has no context.
func quick[T any](g *GUIClient, method string, p guiParams) T {
	ctx, cancel := context.WithTimeout(context.Background(), hintTimeout)
	defer cancel()
	out, _ := get[T](ctx, g, method, p)
	return out
}

func (g *GUIClient) ListFiles(ctx context.Context, owner sandbox.Owner, ref, path string, depth int, all bool) (sandbox.Listing, error) {
	return get[sandbox.Listing](ctx, g, methodListFiles, guiParams{Owner: owner, Ref: ref, Path: path, Depth: depth, All: all})
}

func (g *GUIClient) ReadFile(ctx context.Context, owner sandbox.Owner, ref, path string, offset, limit int64) (sandbox.FileContent, error) {
	return get[sandbox.FileContent](ctx, g, methodReadFile, guiParams{Owner: owner, Ref: ref, Path: path, Offset: offset, Limit: limit})
}

func (g *GUIClient) SaveFiles(ctx context.Context, ref, path, hostPath string) (sandbox.CopyResult, error) {
	return get[sandbox.CopyResult](ctx, g, methodSaveFiles, guiParams{Ref: ref, Path: path, HostPath: hostPath})
}

func (g *GUIClient) Stop(ctx context.Context, owner sandbox.Owner, ref string) (sandbox.Info, error) {
	return get[sandbox.Info](ctx, g, methodStop, guiParams{Owner: owner, Ref: ref})
}

func (g *GUIClient) Kill(ctx context.Context, ref string) error {
	return g.Call(ctx, methodKill, guiParams{Ref: ref}, nil)
}

func (g *GUIClient) Delete(ctx context.Context, owner sandbox.Owner, ref string) error {
	return g.Call(ctx, methodDelete, guiParams{Owner: owner, Ref: ref}, nil)
}

func (g *GUIClient) SetPersistent(ctx context.Context, owner sandbox.Owner, ref string, persistent bool) (sandbox.Info, error) {
	return get[sandbox.Info](ctx, g, methodSetPersistent, guiParams{Owner: owner, Ref: ref, Persistent: persistent})
}

func (g *GUIClient) Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	var out sandbox.CommitResult
	return out, g.callStream(ctx, methodCommit, guiParams{Owner: owner, Ref: ref, Commit: req}, func(raw json.RawMessage) error {
		var p guiProgress
		if err := json.Unmarshal(raw, &p); err == nil && progress != nil {
			progress(p.Current, p.Total, p.Message)
		}
		return nil
	}, &out)
}

func (g *GUIClient) ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) {
	return get[sandbox.Export](ctx, g, methodExport, guiParams{Owner: owner, Ref: ref, HostPath: hostPath})
}

func (g *GUIClient) SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error) {
	return get[sandbox.Export](ctx, g, methodSaveDockerfile, guiParams{Ref: ref, HostPath: hostDir})
}

func (g *GUIClient) SetPaused(paused bool) { g.hint(methodSetPaused, guiParams{Paused: paused}) }

func (g *GUIClient) StopEphemeral(ctx context.Context) error {
	return g.Call(ctx, methodStopEphemeral, guiParams{}, nil)
}

func (g *GUIClient) Jobs(sandboxID string) []sandbox.JobInfo {
	return quick[[]sandbox.JobInfo](g, methodJobs, guiParams{Ref: sandboxID})
}

func (g *GUIClient) JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error) {
	return get[sandbox.JobStatus](ctx, g, methodJobStatus, guiParams{JobID: jobID, Since: since})
}

func (g *GUIClient) JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error) {
	return get[sandbox.JobStatus](ctx, g, methodJobStop, guiParams{JobID: jobID})
}

// ShowStats and FollowStats say which sandboxes' stats the window shows.
func (g *GUIClient) ShowStats(ids []string) { g.hint(methodShowStats, guiParams{IDs: ids}) }
func (g *GUIClient) FollowStats(id string)  { g.hint(methodFollowStats, guiParams{Ref: id}) }

func (g *GUIClient) GPUStatus(ctx context.Context) sandbox.GPUStatus {
	out, _ := get[sandbox.GPUStatus](ctx, g, methodGPUStatus, guiParams{})
	return out
}

func (g *GUIClient) Snapshot(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error) {
	return get[sandbox.SnapshotInfo](ctx, g, methodSnapshot, guiParams{Owner: owner, Ref: ref, Take: req})
}

func (g *GUIClient) ListSnapshots(ctx context.Context, ref string) ([]sandbox.SnapshotInfo, error) {
	return get[[]sandbox.SnapshotInfo](ctx, g, methodListSnapshots, guiParams{Ref: ref})
}

func (g *GUIClient) DeleteSnapshot(ctx context.Context, owner sandbox.Owner, ref, snapshotID string) error {
	return g.Call(ctx, methodDeleteSnapshot, guiParams{Owner: owner, Ref: ref, Snapshot: snapshotID}, nil)
}

func (g *GUIClient) Restore(ctx context.Context, owner sandbox.Owner, ref, snapshotID string) (sandbox.RestoreResult, error) {
	return get[sandbox.RestoreResult](ctx, g, methodRestore, guiParams{Owner: owner, Ref: ref, Snapshot: snapshotID})
}

func (g *GUIClient) Fork(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.ForkRequest) ([]sandbox.Fork, error) {
	return get[[]sandbox.Fork](ctx, g, methodFork, guiParams{Owner: owner, Ref: ref, Fork: req})
}

// The egress gate's methods.

func (g *GUIClient) EgressPending() []sandbox.EgressPending {
	return quick[[]sandbox.EgressPending](g, MethodPending, guiParams{})
}

func (g *GUIClient) AnswerEgress(ctx context.Context, id string, a sandbox.EgressAnswer) error {
	return g.Call(ctx, MethodAnswer, AnswerParams{ID: id, Answer: a}, nil)
}

func (g *GUIClient) AnswerEgressHost(ctx context.Context, ref, target string, a sandbox.EgressAnswer) (int, error) {
	var res AnswerResult
	err := g.Call(ctx, MethodAnswerHost, AnswerParams{Sandbox: ref, Host: target, Answer: a}, &res)
	return res.Answered, err
}

func (g *GUIClient) EgressNetwork(ctx context.Context, ref string) (sandbox.EgressNetwork, error) {
	var out sandbox.EgressNetwork
	return out, g.Call(ctx, MethodNetwork, SandboxParams{Sandbox: ref}, &out)
}

func (g *GUIClient) RemoveEgressRule(ctx context.Context, ref, pattern string) error {
	return g.Call(ctx, methodRemoveRule, guiParams{Ref: ref, Pattern: pattern}, nil)
}

func (g *GUIClient) RemoveEgressApproval(ctx context.Context, pattern string) error {
	return g.Call(ctx, methodRemoveApproval, guiParams{Pattern: pattern}, nil)
}

// The images, the settings and quitting.

func (g *GUIClient) ImageState(ctx context.Context, ref string) (ImageState, error) {
	return get[ImageState](ctx, g, methodImageState, guiParams{Ref: ref})
}

func (g *GUIClient) BuildImage(ctx context.Context, progress func(ImageProgress)) error {
	return g.callStream(ctx, methodImageBuild, guiParams{}, func(raw json.RawMessage) error {
		var p ImageProgress
		if err := json.Unmarshal(raw, &p); err == nil && progress != nil {
			progress(p)
		}
		return nil
	}, nil)
}

func (g *GUIClient) ApplySettings(ctx context.Context) ([]string, error) {
	out, err := get[AppliedSettings](ctx, g, MethodApplySettings, guiParams{})
	return out.Restart, err
}

func (g *GUIClient) Busy() Busy { return quick[Busy](g, methodBusy, guiParams{}) }
