package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/control"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The GUI's methods on the control endpoint: what the app's window asks of
// the engine (the UI's Backend), for an app attached to an engine another
// process runs (remote.go is the other side). Each takes one of the params
// below and answers what the engine's method of the same name returns.
const (
	methodWatch          = "gui.watch" // stream of sandbox.Snapshot
	methodLogs           = "gui.logs"
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
	methodImageState     = "gui.image_state"
	methodImageBuild     = "gui.image_build" // progress events engine.ImageBuildProgress, then the result
	// methodApplySettings makes the engine read its config file again and
	// apply what it can (engine.Reconfigure): no params; result
	// appliedSettings.
	methodApplySettings = "settings.apply"
)

// guiParams are every GUI method's params; each method reads its own.
type guiParams struct {
	Owner      sandbox.Owner         `json:"owner,omitzero"`
	Ref        string                `json:"ref,omitempty"`
	Path       string                `json:"path,omitempty"`
	HostPath   string                `json:"host_path,omitempty"`
	Depth      int                   `json:"depth,omitempty"`
	All        bool                  `json:"all,omitempty"`
	Offset     int64                 `json:"offset,omitempty"`
	Limit      int64                 `json:"limit,omitempty"`
	Tail       int                   `json:"tail,omitempty"`
	Persistent bool                  `json:"persistent,omitempty"`
	Paused     bool                  `json:"paused,omitempty"`
	Commit     sandbox.CommitRequest `json:"commit,omitzero"`
	JobID      string                `json:"job_id,omitempty"`
	Since      int64                 `json:"since,omitempty"`
	IDs        []string              `json:"ids,omitempty"`
}

// guiProgress is one progress event of gui.commit.
type guiProgress struct {
	Current, Total float64
	Message        string
}

// imageState is gui.image_state's result.
type imageState struct {
	State engine.ImageState          `json:"state"`
	Build *engine.ImageBuildProgress `json:"build,omitempty"`
}

// appliedSettings is settings.apply's result: the changed keys that wait
// for the engine's restart.
type appliedSettings struct {
	Restart []string `json:"restart"`
}

// serveGUI adds the GUI's methods for eng to srv. reload reads the config
// file again as the engine was started with it (settings.apply).
func serveGUI(srv *control.Server, eng *engine.Engine, reload func() (config.Config, error)) {
	handle := func(method string, f func(ctx context.Context, p guiParams) (any, error)) {
		srv.Handle(method, func(ctx context.Context, raw json.RawMessage, _ func(any) error) (any, error) {
			var p guiParams
			if len(raw) > 0 {
				if err := json.Unmarshal(raw, &p); err != nil {
					return nil, fmt.Errorf("params of %s: %v: %w", method, err, sandbox.ErrInvalid)
				}
			}
			return f(ctx, p)
		})
	}
	done := struct{}{}
	srv.HandleStream(methodWatch, func(ctx context.Context, _ json.RawMessage, send func(any) error) (any, error) {
		w := eng.Watch(ctx)
		for {
			snap, err := w.Next(ctx)
			if err != nil {
				return nil, err
			}
			if err := send(snap); err != nil {
				return nil, err
			}
		}
	})
	handle(methodLogs, func(ctx context.Context, p guiParams) (any, error) { return eng.Logs(ctx, p.Ref, p.Tail) })
	handle(methodListFiles, func(ctx context.Context, p guiParams) (any, error) {
		return eng.ListFiles(ctx, p.Owner, p.Ref, p.Path, p.Depth, p.All)
	})
	handle(methodReadFile, func(ctx context.Context, p guiParams) (any, error) {
		return eng.ReadFile(ctx, p.Owner, p.Ref, p.Path, p.Offset, p.Limit)
	})
	handle(methodSaveFiles, func(ctx context.Context, p guiParams) (any, error) {
		return eng.SaveFiles(ctx, p.Ref, p.Path, p.HostPath)
	})
	handle(methodStop, func(ctx context.Context, p guiParams) (any, error) { return eng.Stop(ctx, p.Owner, p.Ref) })
	handle(methodKill, func(ctx context.Context, p guiParams) (any, error) { return done, eng.Kill(ctx, p.Ref) })
	handle(methodDelete, func(ctx context.Context, p guiParams) (any, error) { return done, eng.Delete(ctx, p.Owner, p.Ref) })
	handle(methodSetPersistent, func(ctx context.Context, p guiParams) (any, error) {
		return eng.SetPersistent(ctx, p.Owner, p.Ref, p.Persistent)
	})
	srv.HandleStream(methodCommit, func(ctx context.Context, raw json.RawMessage, send func(any) error) (any, error) {
		var p guiParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("params of %s: %v: %w", methodCommit, err, sandbox.ErrInvalid)
		}
		return eng.Commit(ctx, p.Owner, p.Ref, p.Commit, func(cur, total float64, msg string) {
			_ = send(guiProgress{Current: cur, Total: total, Message: msg})
		})
	})
	handle(methodExport, func(ctx context.Context, p guiParams) (any, error) {
		return eng.ExportDockerfile(ctx, p.Owner, p.Ref, p.HostPath)
	})
	handle(methodSaveDockerfile, func(ctx context.Context, p guiParams) (any, error) {
		return eng.SaveDockerfile(ctx, p.Ref, p.HostPath)
	})
	handle(methodSetPaused, func(_ context.Context, p guiParams) (any, error) { eng.SetPaused(p.Paused); return done, nil })
	handle(methodStopEphemeral, func(ctx context.Context, _ guiParams) (any, error) { return done, eng.StopEphemeral(ctx) })
	handle(methodJobs, func(_ context.Context, p guiParams) (any, error) { return eng.Jobs(p.Ref), nil })
	handle(methodJobStatus, func(ctx context.Context, p guiParams) (any, error) { return eng.JobStatus(ctx, p.JobID, p.Since) })
	handle(methodJobStop, func(ctx context.Context, p guiParams) (any, error) { return eng.JobStop(ctx, p.JobID) })
	handle(methodShowStats, func(_ context.Context, p guiParams) (any, error) { eng.ShowStats(p.IDs); return done, nil })
	handle(methodFollowStats, func(_ context.Context, p guiParams) (any, error) { eng.FollowStats(p.Ref); return done, nil })
	handle(methodGPUStatus, func(ctx context.Context, _ guiParams) (any, error) { return eng.GPUStatus(ctx), nil })
	handle(methodImageState, func(ctx context.Context, _ guiParams) (any, error) {
		st, build, err := eng.DefaultImageState(ctx)
		return imageState{State: st, Build: build}, err
	})
	srv.HandleStream(methodImageBuild, func(ctx context.Context, _ json.RawMessage, send func(any) error) (any, error) {
		return done, eng.BuildDefaultImage(ctx, func(p engine.ImageBuildProgress) { _ = send(p) })
	})
	handle(methodApplySettings, func(ctx context.Context, _ guiParams) (any, error) {
		cfg, err := reload()
		if err != nil {
			return nil, err
		}
		restart, err := eng.Reconfigure(ctx, cfg)
		return appliedSettings{Restart: restart}, err
	})
	// An attached window that leaves no longer shows any sandbox's stats.
	srv.OnDetach(func() {
		eng.ShowStats(nil)
		eng.FollowStats("")
	})
}
