// Package run runs one process in a sandbox the way every Sandtray call
// does: through a wrapper that records its process group, with a timeout
// that kills that group, a sweep of whatever the process left running when
// it ends, output capped per stream (and kept for a job, and streamed as
// progress), the sandbox's out-of-memory count, and the disk watchdog that
// stops a call whose sandbox outgrows limits.disk_mb. It also knows the
// languages execute_code accepts and the script that runs a snippet of one
// as a fresh process (languages.go).
//
// It never sees the engine: the sandbox is a Target the engine implements.
package run

import (
	"context"
	"io"

	"log/slog"
	"time"

	"github.com/sandtray/sandtray/engine/internal/agentclient"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker is what running a process needs from the runtime, through the
// engine's exec gate (engine/internal/execgate).
type Docker interface {
	Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error)
	// KillGroups kills the process groups given and whatever carries
	// marker, as user; it returns how many processes it killed.
	KillGroups(ctx context.Context, id, user, marker string, groups []int) (int, error)
	// ExecAgent runs the agent's subcommand args with an exec of its own
	// and returns at most max bytes of its output.
	ExecAgent(ctx context.Context, id, user string, args []string, stdin io.Reader, max int) ([]byte, error)
	// Session is the sandbox's session with its agent.
	Session(ctx context.Context, id string) (*agentclient.Session, error)
	Inspect(ctx context.Context, id string) (runtime.Container, error)
	Kill(ctx context.Context, id string) error
	Disk(ctx context.Context, id string) (runtime.DiskInfo, error)
	SizeRw(ctx context.Context, id string) (int64, error)
}

// Limits cap each stream of a run: for the model, and kept for the log.
type Limits struct {
	OutputBytes    int
	LogOutputBytes int
}

// Runner runs processes in sandboxes. Create it with New.
type Runner struct {
	docker Docker
	limits Limits
	log    *slog.Logger
}

// New returns a Runner that talks to d.
func New(d Docker, limits Limits, log *slog.Logger) *Runner {
	return &Runner{docker: d, limits: limits, log: log}
}

// Limits are the runner's caps.
func (r *Runner) Limits() Limits { return r.limits }

// killTimeout bounds killing a stopped call's processes, and reading the
// out-of-memory count after a call.
const killTimeout = 10 * time.Second

// StatusOf maps a container's state to a sandbox status.
func StatusOf(state runtime.State) sandbox.Status {
	switch state {
	case runtime.StateRunning, runtime.StateRestarting:
		return sandbox.StatusRunning
	case runtime.StatePaused:
		return sandbox.StatusPaused
	default:
		return sandbox.StatusStopped
	}
}

// sleep waits d, or less when ctx is done first, and then says so.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
