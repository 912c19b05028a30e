package control

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The window's protocol: what a Sandtray window asks of its engine. There
// is one of it, whoever the window is: the app that runs the engine talks
// to it over an in-memory pipe (Server.Pipe), an app attached to an engine
// another process runs over the control socket; both through GUIClient
// (guiclient.go), both answered by the table below.

// GUI is what a window needs of the engine: *engine.Engine, through the
// host's small adapter for the methods whose types are the engine's own.
type GUI interface {
	Backend
	sandbox.Snapshots // the Snapshots tab

	Logs(ctx context.Context, ref string, tail int) ([]sandbox.Activity, error)
	ListFiles(ctx context.Context, owner sandbox.Owner, ref, path string, depth int, all bool) (sandbox.Listing, error)
	ReadFile(ctx context.Context, owner sandbox.Owner, ref, path string, offset, limit int64) (sandbox.FileContent, error)
	SaveFiles(ctx context.Context, ref, path, hostPath string) (sandbox.CopyResult, error)
	Stop(ctx context.Context, owner sandbox.Owner, ref string) (sandbox.Info, error)
	Kill(ctx context.Context, ref string) error
	Delete(ctx context.Context, owner sandbox.Owner, ref string) error
	SetPersistent(ctx context.Context, owner sandbox.Owner, ref string, persistent bool) (sandbox.Info, error)
	Commit(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error)
	ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error)
	SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error)
	SetPaused(paused bool)
	StopEphemeral(ctx context.Context) error
	Jobs(sandboxID string) []sandbox.JobInfo
	JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error)
	JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error)
	ShowStats(ids []string)
	FollowStats(id string)
	GPUStatus(ctx context.Context) sandbox.GPUStatus
	RemoveEgressRule(ctx context.Context, ref, pattern string) error
	RemoveEgressApproval(ctx context.Context, pattern string) error

	// ImageState is what Docker has of ref ("" for the default image), and
	// the build of the default image while one runs.
	ImageState(ctx context.Context, ref string) (ImageState, error)
	// BuildImage builds the default image, or joins the build under way.
	BuildImage(ctx context.Context, progress func(ImageProgress)) error
	// ApplySettings reads the config file again and applies what the
	// running engine can; it returns the changed keys that wait for a
	// restart.
	ApplySettings(ctx context.Context) ([]string, error)
	// Busy is what quitting the engine would cut short.
	Busy() Busy
}

// ImageState is an image as a window shows it.
type ImageState struct {
	Ref       string         `json:"ref"`
	Present   bool           `json:"present"`
	Buildable bool           `json:"buildable,omitempty"` // Sandtray's own image: it builds it
	Build     *ImageProgress `json:"build,omitempty"`     // the default image's build, while it runs
}

// ImageProgress is where a build of the default image is: its step, how far
// through it, and about how long it takes yet.
type ImageProgress struct {
	Step  string        `json:"step"`
	Done  int64         `json:"done,omitempty"`
	Total int64         `json:"total,omitempty"`
	Bytes bool          `json:"bytes,omitempty"` // Done and Total count bytes, not packages
	Left  time.Duration `json:"left,omitempty"`  // the engine's estimate of what the build takes yet
}

// Busy is what runs in the engine now: the assistants connected and their
// calls in flight.
type Busy struct {
	Sessions int `json:"sessions"`
	Calls    int `json:"calls"`
}

// The window's methods. Each takes guiParams (its own fields of them) and
// answers what the GUI method of the same name returns; the streams send
// events before their result.
const (
	MethodGUIWatch       = "gui.watch" // stream of sandbox.Snapshot, until the client leaves
	methodLogs           = "gui.logs"  // LogsQuery's fields; result []LogEntry
	methodActivityEntry  = "gui.activity_entry"
	methodListFiles      = "gui.list_files"
	methodReadFile       = "gui.read_file"
	methodSaveFiles      = "gui.save_files"
	methodStop           = "gui.stop"
	methodKill           = "gui.kill"
	methodDelete         = "gui.delete"
	methodSetPersistent  = "gui.set_persistent"
	methodCommit         = "gui.commit" // progress events guiProgress, then the result
	methodExport         = "gui.export_dockerfile"
	methodSaveDockerfile = "gui.save_dockerfile"
	methodSetPaused      = "gui.set_paused"
	methodStopEphemeral  = "gui.stop_ephemeral"
	methodJobs           = "gui.jobs"
	methodJobStatus      = "gui.job_status"
	methodJobStop        = "gui.job_stop"
	methodShowStats      = "gui.show_stats"
	methodFollowStats    = "gui.follow_stats"
	methodGPUStatus      = "gui.gpu_status"
	methodSnapshot       = "gui.snapshot"
	methodListSnapshots  = "gui.list_snapshots"
	methodDeleteSnapshot = "gui.delete_snapshot"
	methodRestore        = "gui.restore"
	methodFork           = "gui.fork"
	methodRemoveRule     = "gui.remove_egress_rule"
	methodRemoveApproval = "gui.remove_egress_approval"
	methodImageState     = "gui.image_state"
	methodImageBuild     = "gui.image_build" // progress events ImageProgress, then the result
	methodBusy           = "gui.busy"
	// MethodApplySettings makes the engine read its config file again and
	// apply what it can: no params; result AppliedSettings.
	MethodApplySettings = "settings.apply"
)

// guiParams are every window method's params; each method reads its own.
type guiParams struct {
	Owner      sandbox.Owner           `json:"owner,omitzero"`
	Ref        string                  `json:"ref,omitempty"`
	Path       string                  `json:"path,omitempty"`
	HostPath   string                  `json:"host_path,omitempty"`
	Depth      int                     `json:"depth,omitempty"`
	All        bool                    `json:"all,omitempty"`
	Offset     int64                   `json:"offset,omitempty"`
	Limit      int64                   `json:"limit,omitempty"`
	Tail       int                     `json:"tail,omitempty"`
	Persistent bool                    `json:"persistent,omitempty"`
	Paused     bool                    `json:"paused,omitempty"`
	Commit     sandbox.CommitRequest   `json:"commit,omitzero"`
	JobID      string                  `json:"job_id,omitempty"`
	Since      int64                   `json:"since,omitempty"`
	IDs        []string                `json:"ids,omitempty"`
	Snapshot   string                  `json:"snapshot,omitempty"`
	Take       sandbox.SnapshotRequest `json:"take,omitzero"`
	Fork       sandbox.ForkRequest     `json:"fork,omitzero"`
	Pattern    string                  `json:"pattern,omitempty"`
	Keep       int                     `json:"keep,omitempty"`
	After      time.Time               `json:"after,omitzero"`
}

// guiProgress is one progress event of gui.commit.
type guiProgress struct {
	Current, Total float64
	Message        string
}

// AppliedSettings is settings.apply's result: the changed keys that wait
// for the engine's restart.
type AppliedSettings struct {
	Restart []string `json:"restart"`
}

// done is the result of a method that answers nothing but success.
type done struct{}

// guiMethod is one row of the window's handler table: a method's name,
// whether it streams (sends events before its result), and its body.
type guiMethod struct {
	name   string
	stream bool
	h      func(ctx context.Context, p guiParams, send func(any) error) (any, error)
}

// guiMethods is the window's handler table on g.
func guiMethods(g GUI) []guiMethod {
	call := func(name string, f func(ctx context.Context, p guiParams) (any, error)) guiMethod {
		return guiMethod{name: name, h: func(ctx context.Context, p guiParams, _ func(any) error) (any, error) { return f(ctx, p) }}
	}
	ok := func(err error) (any, error) { return done{}, err }
	return []guiMethod{
		{name: MethodGUIWatch, stream: true, h: func(ctx context.Context, _ guiParams, send func(any) error) (any, error) {
			w := g.Snapshots(ctx)
			for {
				snap, err := w.Next(ctx)
				if err != nil {
					return nil, err
				}
				if err := send(snap); err != nil {
					return nil, err
				}
			}
		}},
		call(methodLogs, func(ctx context.Context, p guiParams) (any, error) {
			acts, err := g.Logs(ctx, p.Ref, p.Tail)
			return Entries(acts, LogsQuery{Tail: p.Tail, Keep: p.Keep, After: p.After}), err
		}),
		call(methodActivityEntry, func(ctx context.Context, p guiParams) (any, error) { return activityAt(ctx, g, p.Ref, p.After) }),
		call(methodListFiles, func(ctx context.Context, p guiParams) (any, error) {
			return g.ListFiles(ctx, p.Owner, p.Ref, p.Path, p.Depth, p.All)
		}),
		call(methodReadFile, func(ctx context.Context, p guiParams) (any, error) {
			return g.ReadFile(ctx, p.Owner, p.Ref, p.Path, p.Offset, p.Limit)
		}),
		call(methodSaveFiles, func(ctx context.Context, p guiParams) (any, error) {
			return g.SaveFiles(ctx, p.Ref, p.Path, p.HostPath)
		}),
		call(methodStop, func(ctx context.Context, p guiParams) (any, error) { return g.Stop(ctx, p.Owner, p.Ref) }),
		call(methodKill, func(ctx context.Context, p guiParams) (any, error) { return ok(g.Kill(ctx, p.Ref)) }),
		call(methodDelete, func(ctx context.Context, p guiParams) (any, error) { return ok(g.Delete(ctx, p.Owner, p.Ref)) }),
		call(methodSetPersistent, func(ctx context.Context, p guiParams) (any, error) {
			return g.SetPersistent(ctx, p.Owner, p.Ref, p.Persistent)
		}),
		{name: methodCommit, stream: true, h: func(ctx context.Context, p guiParams, send func(any) error) (any, error) {
			return g.Commit(ctx, p.Owner, p.Ref, p.Commit, func(cur, total float64, msg string) {
				_ = send(guiProgress{Current: cur, Total: total, Message: msg})
			})
		}},
		call(methodExport, func(ctx context.Context, p guiParams) (any, error) {
			return g.ExportDockerfile(ctx, p.Owner, p.Ref, p.HostPath)
		}),
		call(methodSaveDockerfile, func(ctx context.Context, p guiParams) (any, error) { return g.SaveDockerfile(ctx, p.Ref, p.HostPath) }),
		call(methodSetPaused, func(_ context.Context, p guiParams) (any, error) { g.SetPaused(p.Paused); return done{}, nil }),
		call(methodStopEphemeral, func(ctx context.Context, _ guiParams) (any, error) { return ok(g.StopEphemeral(ctx)) }),
		call(methodJobs, func(_ context.Context, p guiParams) (any, error) { return g.Jobs(p.Ref), nil }),
		call(methodJobStatus, func(ctx context.Context, p guiParams) (any, error) { return g.JobStatus(ctx, p.JobID, p.Since) }),
		call(methodJobStop, func(ctx context.Context, p guiParams) (any, error) { return g.JobStop(ctx, p.JobID) }),
		call(methodShowStats, func(_ context.Context, p guiParams) (any, error) { g.ShowStats(p.IDs); return done{}, nil }),
		call(methodFollowStats, func(_ context.Context, p guiParams) (any, error) { g.FollowStats(p.Ref); return done{}, nil }),
		call(methodGPUStatus, func(ctx context.Context, _ guiParams) (any, error) { return g.GPUStatus(ctx), nil }),
		call(methodSnapshot, func(ctx context.Context, p guiParams) (any, error) { return g.Snapshot(ctx, p.Owner, p.Ref, p.Take) }),
		call(methodListSnapshots, func(ctx context.Context, p guiParams) (any, error) { return g.ListSnapshots(ctx, p.Ref) }),
		call(methodDeleteSnapshot, func(ctx context.Context, p guiParams) (any, error) {
			return ok(g.DeleteSnapshot(ctx, p.Owner, p.Ref, p.Snapshot))
		}),
		call(methodRestore, func(ctx context.Context, p guiParams) (any, error) { return g.Restore(ctx, p.Owner, p.Ref, p.Snapshot) }),
		call(methodFork, func(ctx context.Context, p guiParams) (any, error) { return g.Fork(ctx, p.Owner, p.Ref, p.Fork) }),
		call(methodRemoveRule, func(ctx context.Context, p guiParams) (any, error) {
			return ok(g.RemoveEgressRule(ctx, p.Ref, p.Pattern))
		}),
		call(methodRemoveApproval, func(ctx context.Context, p guiParams) (any, error) {
			return ok(g.RemoveEgressApproval(ctx, p.Pattern))
		}),
		call(methodImageState, func(ctx context.Context, p guiParams) (any, error) { return g.ImageState(ctx, p.Ref) }),
		{name: methodImageBuild, stream: true, h: func(ctx context.Context, _ guiParams, send func(any) error) (any, error) {
			return ok(g.BuildImage(ctx, func(p ImageProgress) { _ = send(p) }))
		}},
		call(methodBusy, func(context.Context, guiParams) (any, error) { return g.Busy(), nil }),
		call(MethodApplySettings, func(ctx context.Context, _ guiParams) (any, error) {
			restart, err := g.ApplySettings(ctx)
			return AppliedSettings{Restart: restart}, err
		}),
	}
}

// HandleGUI adds the window's methods on g. An attached window that leaves
// no longer has any sandbox's stats sampled for it.
func (s *Server) HandleGUI(g GUI) {
	for _, m := range guiMethods(g) {
		h := func(ctx context.Context, raw json.RawMessage, send func(any) error) (any, error) {
			var p guiParams
			if len(raw) > 0 {
				if err := json.Unmarshal(raw, &p); err != nil {
					return nil, errBadParams(m.name, err)
				}
			}
			return m.h(ctx, p, send)
		}
		if m.stream {
			s.HandleStream(m.name, h)
		} else {
			s.Handle(m.name, h)
		}
	}
	s.OnDetach(func() {
		g.ShowStats(nil)
		g.FollowStats("")
	})
}

// String names a Busy for a person: "2 assistants connected, 1 call running".
func (b Busy) String() string {
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	return plural(b.Sessions, "assistant connected", "assistants connected") + ", " + plural(b.Calls, "call running", "calls running")
}
