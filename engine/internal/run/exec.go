package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// PidDir is a folder inside a sandbox that older Sandtrays kept their
// calls' process groups in; snapshots leave it out.
const PidDir = "/tmp/.sandtray"

// Process is one process to run in a sandbox.
type Process struct {
	Cmd     []string
	Env     []string
	Workdir string
	User    string // "" runs as the sandbox's user (sandbox.user, else the image's)
	Stdin   io.Reader
	Timeout time.Duration
	Stream  io.Writer // optional: also receives stdout and stderr as they come
	Out     *Output   // optional: where the output goes; Run makes one when nil
}

// Result is what a run produced: the result for the model and the larger
// copies kept for the activity log.
type Result struct {
	Result         sandbox.ExecResult
	LogOut, LogErr string
}

// Activity is act, a call's entry in its sandbox's activity log,
// completed with how its run ended: r, or err.
func (r Result) Activity(act sandbox.Activity, err error) sandbox.Activity {
	if err != nil {
		act.Error = err.Error()
	} else {
		code := r.Result.ExitCode
		act.ExitCode = &code
		act.Duration = r.Result.Duration.Milliseconds()
		act.Stdout, act.Stderr, act.TimedOut = r.LogOut, r.LogErr, r.Result.TimedOut
	}
	return act
}

// Run runs p in t (through the sandbox's agent: see
// engine/internal/execgate), killing its process group, and whatever it
// started, at the timeout or when ctx is cancelled, and caps each stream.
// Everything p starts carries its call's marker (SANDTRAY_EXEC), and what
// of it is still running when p ends is killed then.
func (r *Runner) Run(ctx context.Context, t sandbox.Handle, p Process) (Result, error) {
	if err := t.EnsureRunning(ctx); err != nil {
		return Result{}, err
	}
	out := p.Out
	if out == nil {
		out = NewOutput(r.limits.LogOutputBytes, nil, nil)
	}
	out.extra = p.Stream
	key := sandbox.RandomHex(8)
	runCtx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	started := time.Now()
	opts := runtime.ExecOptions{
		Cmd: p.Cmd, Env: p.Env, Marker: key,
		Workdir: p.Workdir, User: p.User, Stdin: p.Stdin, Stdout: out.stdoutWriter(), Stderr: out.stderrWriter(),
	}
	code, err := r.docker.Exec(runCtx, t.ID(), opts)
	if errors.Is(err, sandbox.ErrConflict) && runCtx.Err() == nil && r.restartStopped(runCtx, t) {
		code, err = r.docker.Exec(runCtx, t.ID(), opts) // a refused exec ran nothing: safe to run again
	}
	elapsed := time.Since(started)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	restarted := false
	if err != nil && runCtx.Err() != nil {
		restarted = r.killGroup(ctx, t, key, p.User)
		if !timedOut {
			return Result{}, fmt.Errorf("execution cancelled: %w", ctx.Err())
		}
		code, err = -1, nil
	}
	if err != nil && errors.Is(err, agentclient.ErrClosed) && ctx.Err() == nil {
		r.awaitDeath(ctx, t)
	}
	if err != nil {
		return Result{}, t.Gone(fmt.Errorf("exec in sandbox %s: %w", t.Name(), err))
	}
	res := out.Result(sandbox.ExecResult{ExitCode: code, Duration: elapsed, TimedOut: timedOut},
		r.limits.OutputBytes, r.limits.LogOutputBytes)
	if timedOut {
		res.Result.Outcome.End, res.Result.Outcome.Timeout = sandbox.TimedOut, p.Timeout
	}
	res.Result.Outcome.SandboxRestarted = restarted
	return res, nil
}

// restartStopped starts a sandbox that Docker says is not running although
// the engine thought so: the daemon restarted (or someone ran docker stop)
// and the events saying so have not arrived yet. It reports whether the
// sandbox runs now.
func (r *Runner) restartStopped(ctx context.Context, t sandbox.Handle) bool {
	c, err := r.docker.Inspect(ctx, t.ID())
	if err != nil || StatusOf(c.State) != sandbox.StatusStopped {
		return false
	}
	return t.MarkStopped() && t.EnsureRunning(ctx) == nil
}

// Render ends stderr, for the model and the log, with the notes of the
// call's outcome: the one place they are written. Call it once, when the
// outcome is final.
func (o *Result) Render() {
	o.Result.Stderr = o.Result.Outcome.Render(o.Result.Stderr)
	o.LogErr = o.Result.Outcome.Render(o.LogErr)
}

// killGroup kills what the call tagged key started (its marker, and the
// process group of its first process), through the sandbox's agent (see
// execgate.Runtime.KillGroups: its session, else an exec of the agent's
// own kill). It runs with its own deadline, since the caller's context is
// already done (it keeps ctx's values only). A sandbox whose pids are all
// taken (a fork bomb) may refuse even that: after a few tries it is
// restarted, which ends every process in it and keeps its files;
// restarted says so.
func (r *Runner) killGroup(ctx context.Context, t sandbox.Handle, key, user string) (restarted bool) {
	// An install may have the sandbox online, and nothing but it starts
	// there: the kill waits for it (the call's processes are stopped
	// meanwhile), and its time starts after.
	_ = t.WaitExecs(context.WithoutCancel(ctx))
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
	var err error
	for try := 0; try < 3; try++ {
		if _, err = r.docker.KillGroups(kctx, t.ID(), user, key, nil); err == nil {
			cancel()
			return false
		}
		if sleep(kctx, 500*time.Millisecond) != nil {
			break
		}
	}
	cancel()
	r.log.Warn("kill a stopped call's processes; restarting the sandbox", "sandbox", t.Name(), "err", err)
	ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
	defer cancel()
	if err := r.docker.Kill(ctx, t.ID()); err != nil {
		r.log.Warn("kill sandbox", "sandbox", t.Name(), "err", err)
		return false
	}
	// The engine's own kill: started again whatever the engine has heard
	// of its end meanwhile (its die event may have marked it stopped).
	c, err := r.docker.Inspect(ctx, t.ID())
	if err != nil || StatusOf(c.State) != sandbox.StatusStopped {
		return false
	}
	t.MarkStopped()
	return t.EnsureRunning(ctx) == nil
}

// deathWait bounds how long a call whose agent went away waits to hear
// that its sandbox died (the engine then ends the call with that outcome,
// through its context: killed for memory, or stopped).
const deathWait = 5 * time.Second

// awaitDeath waits, when t's container no longer runs, for the engine to
// end the call with why it died (its context's cause), at most deathWait:
// the agent's session ends with its sandbox, a moment before the
// runtime's event says why.
func (r *Runner) awaitDeath(ctx context.Context, t sandbox.Handle) {
	c, err := r.docker.Inspect(ctx, t.ID())
	if err != nil || StatusOf(c.State) == sandbox.StatusRunning {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(deathWait):
	}
}
