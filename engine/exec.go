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

// sweep kills every process that carries the exec's marker in its
// environment: what the call started and left running, detached with setsid
// or nohup or not, since children inherit the environment. It stops each
// round's finds before killing them, so a fork bomb cannot outgrow it, and
// uses nothing but grep and the shell's builtins. When the sandbox has no
// pid left to fork grep, it finds nothing; the engine then restarts the
// wedged sandbox at the next exec (restartWedged).
const sweep = `sandtray_sweep() { k=$SANDTRAY_EXEC; f=` + pidDir + `/$k.left; n=0; for _ in 1 2 3 4 5 6 7 8 9 10; do ` +
	// grep runs with the marker emptied, so it does not find itself.
	`SANDTRAY_EXEC= LC_ALL=C grep -lzx "SANDTRAY_EXEC=$k" /proc/[0-9]*/environ >"$f" 2>/dev/null; p=; ` +
	`while read -r l; do l=${l#/proc/}; l=${l%/environ}; [ "$l" = "$1" ] || p="$p $l"; done <"$f"; ` +
	// A process in the middle of an execve shows no environment for an
	// instant: only a second empty scan in a row ends the sweep.
	`if [ -z "$p" ]; then n=$((n+1)); [ $n -lt 2 ] || break; continue; fi; n=0; ` +
	`kill -STOP $p 2>/dev/null; kill -KILL $p 2>/dev/null; done; }; `

// wrapper runs the real command ("$0" "$@") as a child of a shell that records
// its own pid (in a sticky, world-writable folder, as any user may run
// execs), and sweeps what the command left running when it ends. Docker makes
// every exec's first process a session and process group leader, so that pid
// is the group to kill.
const wrapper = sweep + `mkdir -m 1777 -p ` + pidDir + ` 2>/dev/null; echo $$ >` + pidDir + `/"$SANDTRAY_EXEC".pid 2>/dev/null; ` +
	`"$0" "$@"; rc=$?; sandtray_sweep $$; rm -f ` + pidDir + `/"$SANDTRAY_EXEC".pid "$f"; exit $rc`

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
	if err != nil && runCtx.Err() != nil {
		e.killGroup(b, key, r.user)
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
// dash, Debian's sh, rejects the "--" that bash accepts). It runs with its
// own deadline, since the caller's context is already done.
func (e *Engine) killGroup(b *box, key, user string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pidFile := pidDir + "/" + key + ".pid"
	script := sweep + `read -r p <` + pidFile + ` 2>/dev/null && [ -n "$p" ] && kill -KILL -"$p" "$p" 2>/dev/null; sandtray_sweep $$; rm -f "$f" ` + pidFile
	var sink bytes.Buffer
	// As the exec's own user: with every capability dropped, even root may
	// only signal processes of its own uid.
	opts := docker.ExecOptions{Cmd: []string{"/bin/sh", "-c", script}, Env: []string{"SANDTRAY_EXEC=" + key},
		User: user, Stdout: &sink, Stderr: &sink}
	if _, err := e.docker.Exec(ctx, b.id, opts); err != nil {
		e.log.Warn("kill timed-out exec", "sandbox", b.name, "err", err)
	}
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
