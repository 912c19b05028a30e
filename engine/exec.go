package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// pidDir holds, inside a sandbox, the pid of each running exec's process
// group, so a timeout or cancellation can kill the whole tree.
const pidDir = "/tmp/.sandtray"

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
const sweep = `sandtray_sweep() { k=$SANDTRAY_EXEC; f=` + pidDir + `/$k.left; n=0; for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do p=; ` +
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
const wrapper = sweep + `[ -d ` + pidDir + ` ] || mkdir -m 1777 -p ` + pidDir + ` 2>/dev/null; echo $$ 2>/dev/null >` + pidDir + `/"$SANDTRAY_EXEC".pid; ` +
	`"$0" "$@"; rc=$?; sandtray_sweep $$ $$; rm -f ` + pidDir + `/"$SANDTRAY_EXEC".pid "$f"; exit $rc`

// run is one process to execute in a sandbox.
type run struct {
	cmd     []string
	env     []string
	workdir string
	user    string // "" runs as the sandbox's user (sandbox.user, else the image's)
	stdin   io.Reader
	timeout time.Duration
	stream  io.Writer   // optional: also receives stdout and stderr as they come
	out     *callOutput // optional: where the output goes; execute makes one when nil
}

// runOutput is what run produced: the result for the model and the larger
// copies kept for the activity log.
type runOutput struct {
	result         sandbox.ExecResult
	logOut, logErr string
}

// execute runs r in b with one docker exec, killing its process group at the
// timeout or when ctx is cancelled, and caps each stream.
func (e *Engine) execute(ctx context.Context, b *box, r run) (runOutput, error) {
	if err := e.ensureRunning(ctx, b); err != nil {
		return runOutput{}, err
	}
	out := r.out
	if out == nil {
		out = newCallOutput(e.cfg.Limits.LogOutputBytes, false, nil)
	}
	out.extra = r.stream
	key := randomHex(8)
	runCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	started := time.Now()
	opts := docker.ExecOptions{
		Cmd:     append([]string{"/bin/sh", "-c", wrapper}, r.cmd...),
		Env:     append(r.env, "SANDTRAY_EXEC="+key),
		Workdir: r.workdir, User: r.user, Stdin: r.stdin, Stdout: out.stdoutWriter(), Stderr: out.stderrWriter(),
	}
	code, err := e.docker.Exec(runCtx, b.id, opts)
	if errors.Is(err, sandbox.ErrConflict) && runCtx.Err() == nil && e.restartStopped(runCtx, b) {
		code, err = e.docker.Exec(runCtx, b.id, opts) // a refused exec ran nothing: safe to run again
	}
	elapsed := time.Since(started)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	restarted := false
	if err != nil && runCtx.Err() != nil {
		restarted = e.killGroup(b, key, r.user)
		if !timedOut {
			return runOutput{}, fmt.Errorf("execution cancelled: %w", ctx.Err())
		}
		code, err = -1, nil
	}
	if err != nil {
		return runOutput{}, e.gone(b, fmt.Errorf("exec in sandbox %s: %w", b.name, err))
	}
	res := out.result(sandbox.ExecResult{ExitCode: code, Duration: elapsed, TimedOut: timedOut},
		e.cfg.Limits.OutputBytes, e.cfg.Limits.LogOutputBytes)
	if timedOut {
		res.note(fmt.Sprintf("timed out after %s; the process group was killed", r.timeout))
	}
	if restarted {
		res.note("the sandbox had no process left to stop the call with (its pids limit was reached), so it was restarted; its files are kept")
	}
	return res, nil
}

// restartStopped starts a sandbox that Docker says is not running although
// the engine thought so: the daemon restarted (or someone ran docker stop)
// and the events saying so have not arrived yet. It reports whether the
// sandbox runs now.
func (e *Engine) restartStopped(ctx context.Context, b *box) bool {
	c, err := e.docker.Inspect(ctx, b.id)
	if err != nil || statusOf(c.State) != sandbox.StatusStopped {
		return false
	}
	e.setStatus(b, sandbox.StatusStopped)
	return e.ensureRunning(ctx, b) == nil
}

// note adds a line from Sandtray to the end of stderr, for the model and the log.
func (o *runOutput) note(text string) {
	line := "[sandtray: " + text + "]"
	if o.result.Stderr != "" && !strings.HasSuffix(o.result.Stderr, "\n") {
		line = "\n" + line
	}
	o.result.Stderr += line
	o.logErr += line
}

// killGroup kills the process group of the exec tagged key ("kill -KILL -PGID":
// dash, Debian's sh, rejects the "--" that bash accepts), then sweeps what
// carries its marker. It runs with its own deadline, since the caller's
// context is already done. A sandbox whose pids are all taken (a fork bomb)
// may refuse even that exec: after a few tries it is restarted, which ends
// every process in it and keeps its files; restarted says so.
func (e *Engine) killGroup(b *box, key, user string) (restarted bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pidFile := pidDir + "/" + key + ".pid"
	script := sweep + `read -r p <` + pidFile + ` 2>/dev/null && [ -n "$p" ] && kill -KILL -"$p" "$p" 2>/dev/null; ` +
		`sandtray_sweep $$ "$p" grep; rm -f "$f" ` + pidFile + `; echo swept`
	// As the exec's own user: with every capability dropped, even root may
	// only signal processes of its own uid.
	opts := docker.ExecOptions{Cmd: []string{"/bin/sh", "-c", script}, Env: []string{"SANDTRAY_EXEC=" + key}, User: user}
	var err error
	for try := 0; try < 3; try++ {
		var out bytes.Buffer
		opts.Stdout, opts.Stderr = &out, &out
		if _, err = e.docker.Exec(ctx, b.id, opts); err == nil && strings.HasSuffix(out.String(), "swept\n") {
			return false
		}
		if err == nil {
			err = errors.New(strings.TrimSpace(out.String()))
		}
		time.Sleep(500 * time.Millisecond)
	}
	e.log.Warn("kill a stopped call's processes; restarting the sandbox", "sandbox", b.name, "err", err)
	if err := e.docker.Kill(ctx, b.id); err != nil {
		e.log.Warn("kill sandbox", "sandbox", b.name, "err", err)
		return false
	}
	return e.restartStopped(ctx, b)
}

// timeoutFor applies the configured default and maximum to a requested timeout.
func (e *Engine) timeoutFor(requested time.Duration, background bool) (time.Duration, error) {
	maxT := e.cfg.Limits.MaxExecTimeout.Duration
	switch {
	case requested < 0:
		return 0, fmt.Errorf("timeout_s must not be negative: %w", sandbox.ErrInvalid)
	case requested > maxT:
		return 0, fmt.Errorf("timeout_s %d exceeds the maximum %d (limits.max_exec_timeout in the config): %w",
			int(requested.Seconds()), int(maxT.Seconds()), sandbox.ErrInvalid)
	case requested > 0:
		return requested, nil
	case background:
		return maxT, nil
	}
	return e.cfg.Limits.ExecTimeout.Duration, nil
}

// sandboxPath makes p absolute, relative to the sandbox's workdir.
func sandboxPath(b *box, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(b.spec.Workdir, p)
}

// dockerExec is a plain exec of the engine's own helpers, both streams to out.
func dockerExec(cmd []string, out io.Writer) docker.ExecOptions {
	return docker.ExecOptions{Cmd: cmd, Stdout: out, Stderr: out}
}
