package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// PidDir holds, inside a sandbox, the pid of each running exec's process
// group, so a timeout or cancellation can kill the whole tree.
const PidDir = "/tmp/.sandtray"

// sweep kills the processes a call left running: those in the call's
// process group ($2), and those that carry the call's marker in their
// environment (what the call started, detached with setsid or nohup or
// not, since children inherit the environment). $1 is the sweeping shell,
// spared. Each round's finds are stopped before they are killed, so a fork
// bomb cannot outgrow it.
//
// It uses only the shell's builtins: dash exits when it cannot fork, and a
// fork bomb takes every pid (and its killed processes hold theirs until
// init reaps them). Each round reads every process's stat and the first
// line of its environment (dash drops the NULs between variables). A
// process in the middle of an execve shows no environment for an instant,
// so the sweep ends only at a second empty round, a moment after the first.
// With $3 set (a separate exec, which may fail), one grep then looks for the
// marker anywhere in every environment, past a variable with a newline in
// it. Only simple commands (read, true, grep) open files: the shell exits
// on a compound command whose redirection fails.
const sweep = `sandtray_sweep() { k=$SANDTRAY_EXEC; f=` + PidDir + `/$k.left; n=0; for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do p=; ` +
	`for d in /proc/[0-9]*; do q=${d#/proc/}; [ "$q" != "$1" ] || continue; ` +
	`s=; read -r s 2>/dev/null <"$d/stat"; r=${s##*) }; [ "${r%% *}" != Z ] || continue; r=${r#* }; r=${r#* }; ` +
	`if [ "${r%% *}" = "$2" ]; then p="$p $q"; continue; fi; ` +
	`l=; read -r l 2>/dev/null <"$d/environ"; case $l in *"SANDTRAY_EXEC=$k"*) p="$p $q";; esac; done; ` +
	`if [ -n "$p" ]; then n=0; kill -STOP $p 2>/dev/null; kill -KILL $p 2>/dev/null; continue; fi; ` +
	`n=$((n+1)); [ $n -lt 2 ] || break; i=0; while [ $i -lt 300 ]; do i=$((i+1)); done; done; ` +
	// grep runs with the marker emptied, so that it does not find itself.
	`[ -n "$3" ] || return 0; true 2>/dev/null >"$f" && SANDTRAY_EXEC= LC_ALL=C grep -lzx "SANDTRAY_EXEC=$k" /proc/[0-9]*/environ 2>/dev/null >"$f"; p=; ` +
	`[ ! -s "$f" ] || while read -r l; do l=${l#/proc/}; l=${l%/environ}; [ "$l" = "$1" ] || p="$p $l"; done <"$f"; ` +
	`[ -z "$p" ] || { kill -STOP $p 2>/dev/null; kill -KILL $p 2>/dev/null; }; }; `

// wrapper runs the real command ("$0" "$@") as a child of a shell that records
// its own pid (in a sticky, world-writable folder, as any user may run
// execs), and sweeps what the command left running when it ends. Docker makes
// every exec's first process a session and process group leader, so that pid
// is the group to kill.
const wrapper = sweep + `[ -d ` + PidDir + ` ] || mkdir -m 1777 -p ` + PidDir + ` 2>/dev/null; echo $$ 2>/dev/null >` + PidDir + `/"$SANDTRAY_EXEC".pid; ` +
	`"$0" "$@"; rc=$?; sandtray_sweep $$ $$; rm -f ` + PidDir + `/"$SANDTRAY_EXEC".pid "$f"; exit $rc`

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

// Run runs p in t with one docker exec, killing its process group at the
// timeout or when ctx is cancelled, and caps each stream.
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
		Cmd:     append([]string{"/bin/sh", "-c", wrapper}, p.Cmd...),
		Env:     append(p.Env, "SANDTRAY_EXEC="+key),
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
	t.MarkStopped()
	return t.EnsureRunning(ctx) == nil
}

// Render ends stderr, for the model and the log, with the notes of the
// call's outcome: the one place they are written. Call it once, when the
// outcome is final.
func (o *Result) Render() {
	o.Result.Stderr = o.Result.Outcome.Render(o.Result.Stderr)
	o.LogErr = o.Result.Outcome.Render(o.LogErr)
}

// killGroup kills the process group of the exec tagged key ("kill -KILL -PGID":
// dash, Debian's sh, rejects the "--" that bash accepts), then sweeps what
// carries its marker. It runs with its own deadline, since the caller's
// context is already done (it keeps ctx's values only). A sandbox whose pids are all taken (a fork bomb)
// may refuse even that exec: after a few tries it is restarted, which ends
// every process in it and keeps its files; restarted says so.
func (r *Runner) killGroup(ctx context.Context, t sandbox.Handle, key, user string) (restarted bool) {
	// An install may have the sandbox online, and nothing but it starts
	// there: the kill waits for it (the call's processes are stopped
	// meanwhile), and its time starts after.
	_ = t.WaitExecs(context.WithoutCancel(ctx))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
	defer cancel()
	pidFile := PidDir + "/" + key + ".pid"
	script := sweep + `read -r p <` + pidFile + ` 2>/dev/null && [ -n "$p" ] && kill -KILL -"$p" "$p" 2>/dev/null; ` +
		`sandtray_sweep $$ "$p" grep; rm -f "$f" ` + pidFile + `; echo swept`
	// As the exec's own user: with every capability dropped, even root may
	// only signal processes of its own uid.
	opts := runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", script}, Env: []string{"SANDTRAY_EXEC=" + key}, User: user}
	var err error
	for try := 0; try < 3; try++ {
		var out bytes.Buffer
		opts.Stdout, opts.Stderr = &out, &out
		if _, err = r.docker.Exec(ctx, t.ID(), opts); err == nil && strings.HasSuffix(out.String(), "swept\n") {
			return false
		}
		if err == nil {
			err = errors.New(strings.TrimSpace(out.String()))
		}
		if sleep(ctx, 500*time.Millisecond) != nil {
			break
		}
	}
	r.log.Warn("kill a stopped call's processes; restarting the sandbox", "sandbox", t.Name(), "err", err)
	if err := r.docker.Kill(ctx, t.ID()); err != nil {
		r.log.Warn("kill sandbox", "sandbox", t.Name(), "err", err)
		return false
	}
	return r.restartStopped(ctx, t)
}
