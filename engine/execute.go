package engine

import (
	"errors"

	"github.com/sandtray/sandtray/engine/internal/agentclient"

	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/files"
	"github.com/sandtray/sandtray/engine/internal/jobs"
	"github.com/sandtray/sandtray/engine/internal/kernel"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// ExecCommand runs a shell command (/bin/sh -c) in the sandbox ref, or in the
// session's default sandbox when ref is "" (created on first use).
func (e *Engine) ExecCommand(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommandRequest) (sandbox.ExecOutcome, error) {
	if strings.TrimSpace(req.Command) == "" {
		return sandbox.ExecOutcome{}, fmt.Errorf("command is empty; give a shell command such as \"ls -la\": %w", sandbox.ErrInvalid)
	}
	o, err := jobs.TimingOf(e.cfg().Limits, req.Timeout, req.Wait, req.Background, req.Progress)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	if err := checkEnv("execute_command", req.Env); err != nil {
		return sandbox.ExecOutcome{}, err
	}
	b, err := e.target(ctx, owner, ref, "")
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	cmd := req.Command
	env := sandbox.EnvList(req.Env)
	if req.Workdir != "" {
		env = append(env, "SANDTRAY_CWD="+files.Path(boxTarget{e, b}, req.Workdir))
		cmd = "cd -- \"$SANDTRAY_CWD\" || exit 1\n" + cmd
	}
	act := sandbox.Activity{Tool: "execute_command", Client: owner.Client, Input: req.Command}
	return e.dispatch(ctx, b, act, o, func(ctx context.Context, out *run.Output) (run.Result, error) {
		r := run.Process{Cmd: []string{"/bin/sh", "-c", cmd}, Env: env, Workdir: b.Spec.Workdir, Timeout: o.Timeout, Out: out}
		if req.Stdin != "" {
			r.Stdin = strings.NewReader(req.Stdin)
		}
		res, err := e.runner.Run(ctx, boxTarget{e, b}, r)
		if errors.Is(err, agentclient.ErrNoProgram) {
			err = fmt.Errorf("sandbox %s's image (%s) has no shell (/bin/sh), which execute_command runs commands with; "+
				"its files can still be written, read and listed. Use an image with a shell for commands: %w", b.Name, b.Spec.Image, sandbox.ErrUnsupported)
		}
		return res, err
	})
}

// ExecCode runs a snippet in the given language (python by default): on the
// sandbox's kernel for the language when it has one, so state persists
// between calls, otherwise as a fresh process.
func (e *Engine) ExecCode(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CodeRequest) (sandbox.ExecOutcome, error) {
	return e.execCode(ctx, owner, ref, req, true)
}

// execCode is ExecCode, with kernels or without (the per-call exec path, for
// the benchmark that compares them).
func (e *Engine) execCode(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CodeRequest, kernels bool) (sandbox.ExecOutcome, error) {
	lang, err := run.LanguageFor(req.Language)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	if strings.TrimSpace(req.Code) == "" {
		return sandbox.ExecOutcome{}, fmt.Errorf("code is empty; pass the %s source to run: %w", lang.Name, sandbox.ErrInvalid)
	}
	o, err := jobs.TimingOf(e.cfg().Limits, req.Timeout, req.Wait, req.Background, req.Progress)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	b, err := e.target(ctx, owner, ref, lang.Name)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	act := sandbox.Activity{Tool: "execute_code", Client: owner.Client, Language: lang.Name, Input: req.Code}
	return e.dispatch(ctx, b, act, o, func(ctx context.Context, out *run.Output) (run.Result, error) {
		if kernels && lang.Kernel {
			if res, ok, err := e.kernels.Run(ctx, boxTarget{e, b}, lang.Name, req.Code, req.Reset, o.Timeout, out); ok {
				return res, err
			}
		}
		res, err := e.runner.Run(ctx, boxTarget{e, b}, lang.Script(req.Code, b.Spec.Workdir, o.Timeout, out))
		if err == nil {
			err = lang.NoRuntime(res, b.Spec.Image)
		}
		return res, err
	})
}

// runFunc does a call's work, writing output to out as it comes.
type runFunc func(ctx context.Context, out *run.Output) (run.Result, error)

// dispatch runs a call's work and logs it. Work that ends (timeout and
// kill included) before the caller's wait runs on the caller's goroutine.
// Other work runs on its own: if it is still going after the wait, at once
// for background, it continues as a job and the caller gets the output so
// far and the job's id. Until then, the caller's ctx cancels it.
func (e *Engine) dispatch(ctx context.Context, b *box, act sandbox.Activity, o jobs.Timing, work runFunc) (sandbox.ExecOutcome, error) {
	keep := e.cfg().Limits.LogOutputBytes
	work = e.guarded(b, work)
	if o.Wait > o.Timeout+2*kernel.Grace {
		out := run.NewOutput(keep, nil, o.Progress)
		runCtx, cancel := e.reg.Bound(ctx)
		res, err := work(runCtx, out)
		cancel()
		out.StopProgress()
		return e.finishCall(ctx, b, act, res, err, o.Timeout)
	}
	// The run may outlive the caller as a job: it derives from the engine's
	// lifetime, and the caller's ctx cancels it only until then. Its
	// output is held under the engine's job-output budget (jobs.New).
	runCtx, cancel := context.WithCancel(e.reg.Base())
	x := &jobs.Execution{Out: run.NewOutput(keep, e.outputs, o.Progress), Cancel: cancel, Started: time.Now(), Done: make(chan struct{})}
	var job *jobs.Job
	if o.Wait == 0 { // background: refused before it starts when the job limits are reached
		var err error
		if job, err = e.jobsPart.AddJob(b.ID, b.Name, x); err != nil {
			cancel()
			x.Out.Release()
			e.releaseSoon(b)
			return sandbox.ExecOutcome{}, err
		}
	}
	go func() {
		defer close(x.Done)
		x.Res, x.Err = work(runCtx, x.Out)
	}()
	if job != nil {
		return e.jobsPart.StartJob(b.ID, b.Name, act, x, job, func() { e.releaseSoon(b) }), nil
	}
	timer := time.NewTimer(o.Wait)
	defer timer.Stop()
	select {
	case <-x.Done:
	case <-ctx.Done():
		cancel()
		<-x.Done
	case <-timer.C:
		if job, err := e.jobsPart.AddJob(b.ID, b.Name, x); err == nil {
			return e.jobsPart.StartJob(b.ID, b.Name, act, x, job, func() { e.releaseSoon(b) }), nil
		}
		// At the job limits the call goes on in the foreground, as if its
		// wait were its timeout.
		select {
		case <-x.Done:
		case <-ctx.Done():
			cancel()
			<-x.Done
		}
	}
	cancel()
	x.Out.StopProgress()
	defer x.Out.Release() // finishCall has taken the result's copies
	return e.finishCall(ctx, b, act, x.Res, x.Err, o.Timeout)
}

// finishCall ends a call that ran to its end while the caller waited.
func (e *Engine) finishCall(ctx context.Context, b *box, act sandbox.Activity, res run.Result, err error, timeout time.Duration) (sandbox.ExecOutcome, error) {
	e.releaseSoon(b)
	if err == nil && !res.Result.TimedOut && (res.Result.ExitCode == 137 || res.Result.ExitCode == -1 || res.Result.KernelRestarted) &&
		res.Result.Outcome.End != sandbox.KilledForMemory && e.killedForMemory(context.WithoutCancel(ctx), b) {
		// The one outcome: named for memory. The desktop notice comes from Docker's oom event.
		res.Result.Outcome.End, res.Result.Outcome.MemoryMB = sandbox.KilledForMemory, b.Spec.MemoryMB
		if res.Result.ExitCode == -1 {
			// The whole sandbox was killed (gVisor's answer to its limit),
			// the call's process with it: by SIGKILL, as the OOM killer's.
			res.Result.ExitCode = 137
		}
	}
	res.Render()
	e.record(b.ID, res.Activity(act, err))
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	if res.Result.TimedOut {
		e.notify(b.ID, "Command timed out", fmt.Sprintf("%s in %s ran past its %s timeout and was stopped.", act.Tool, b.Name, timeout))
	}
	return sandbox.ExecOutcome{SandboxID: b.ID, Result: res.Result}, nil
}

// boxTarget is a sandbox of the engine as the packages under engine/internal
// see it: its sandbox.Handle.
type boxTarget struct {
	e *Engine
	b *box
}

func (t boxTarget) ID() string                              { return t.b.ID }
func (t boxTarget) Name() string                            { return t.b.Name }
func (t boxTarget) Workdir() string                         { return t.b.Spec.Workdir }
func (t boxTarget) User() string                            { return t.b.Spec.User }
func (t boxTarget) EnsureRunning(ctx context.Context) error { return t.e.ensureRunning(ctx, t.b) }
func (t boxTarget) MarkStopped() bool {
	marked := false
	t.e.reg.Locked(func() {
		if t.b.Stopping || t.b.Status == sandbox.StatusStopped {
			return // the engine stopped it, or knows it stopped
		}
		t.b.Status = sandbox.StatusStopped
		marked = true
	})
	return marked
}
func (t boxTarget) Gone(err error) error { return t.e.gone(t.b, err) }

// WaitExecs waits while an install holds the sandbox's processes: a
// stopped call's kill waits for it, then has its full time (run.Runner).
func (t boxTarget) WaitExecs(ctx context.Context) error { return t.e.execs.Wait(ctx, t.b.ID) }

// killedForMemory reports whether the kernel's OOM killer struck in the
// sandbox since the engine last looked: a SIGKILL exit alone could be anyone's
// kill -9, so the cgroup's own count decides. It costs one exec, and only
// runs after a call ended by SIGKILL or lost its process. Where the sandbox
// cannot tell (it refused the exec: under gVisor, running out of memory
// stops the whole sandbox), Docker's record of the container's end decides.
func (e *Engine) killedForMemory(ctx context.Context, b *box) bool {
	t := boxTarget{e, b}
	n, ok, err := e.runner.OOMKills(ctx, t)
	if err != nil {
		return e.runner.DiedOfMemory(ctx, t)
	}
	if ok {
		rose := false
		e.reg.Locked(func() {
			rose = n > b.OOMKills
			b.OOMKills = n
		})
		if rose {
			return true
		}
	}
	// A sandbox that died whole (gVisor's answer to its limit, whose
	// cgroup files are its own) may still have answered: the runtime's
	// record decides once it has stopped.
	if c, err := e.docker.Inspect(ctx, b.ID); err == nil && run.StatusOf(c.State) != sandbox.StatusRunning {
		return e.runner.DiedOfMemory(ctx, t)
	}
	return false
}
