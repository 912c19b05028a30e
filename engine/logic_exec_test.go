package engine

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// hangs is a handler under which the command "hang" runs until killed,
// sending its process on procs first; other commands run on the builtin
// shell.
func hangs(procs chan<- *fakeruntime.Proc) fakeruntime.Handler {
	return func(p *fakeruntime.Proc) int {
		if p.Script() == "hang" {
			io.WriteString(p.Stdout, "waiting\n")
			procs <- p
			<-p.Done()
			return 137
		}
		return p.Builtin()
	}
}

// waitKilled fails the test unless p is killed within a few seconds.
func waitKilled(t *testing.T, p *fakeruntime.Proc, what string) {
	t.Helper()
	select {
	case <-p.Done():
		if !p.Killed() {
			t.Errorf("%s: the process ended, but was not killed", what)
		}
	case <-time.After(seconds):
		t.Fatalf("%s: the process is still running", what)
	}
}

// TestLogicExecOutcome: a command's stdout, stderr and exit code come back
// apart; its env, stdin and workdir reach the process, which runs as the
// command given through the engine's wrapper.
func TestLogicExecOutcome(t *testing.T) {
	le := newLogicEngine(t)
	id := le.create(t, sandbox.CreateRequest{Env: map[string]string{"FROM_SANDBOX": "s"}}).ID
	seen := make(chan *fakeruntime.Proc, 1)
	le.rt.SetHandler(func(p *fakeruntime.Proc) int {
		if !strings.HasSuffix(p.Script(), "report") {
			return p.Builtin()
		}
		seen <- p
		in, _ := io.ReadAll(p.Stdin)
		io.WriteString(p.Stdout, "in="+string(in)+" call="+p.Getenv("FROM_CALL")+" box="+p.Getenv("FROM_SANDBOX")+"\n")
		io.WriteString(p.Stderr, "a warning\n")
		return 3
	})
	got := le.run(t, id, sandbox.CommandRequest{Command: "report", Stdin: "data", Env: map[string]string{"FROM_CALL": "c"}})
	if got.Stdout != "in=data call=c box=s\n" || got.Stderr != "a warning\n" || got.ExitCode != 3 || got.TimedOut || got.Truncated {
		t.Errorf("result %+v", got)
	}
	p := <-seen
	if p.Cmd[0] != "/bin/sh" || p.Cmd[1] != "-c" || p.Workdir != le.cfg.Sandbox.Workdir || p.Getenv("SANDTRAY_EXEC") == "" {
		t.Errorf("process %q in %q: want the command through the wrapper, in the sandbox's workdir", p.Cmd, p.Workdir)
	}

	if got := le.run(t, id, sandbox.CommandRequest{Command: "pwd", Workdir: "sub"}); got.ExitCode == 0 {
		t.Errorf("a command in a missing workdir ran: %+v", got)
	}
	le.run(t, id, sandbox.CommandRequest{Command: "mkdir -p sub"})
	if got := le.run(t, id, sandbox.CommandRequest{Command: "pwd", Workdir: "sub"}); got.Stdout != le.cfg.Sandbox.Workdir+"/sub\n" {
		t.Errorf("a command with workdir sub ran in %q", got.Stdout)
	}
	if got := le.run(t, id, sandbox.CommandRequest{Command: "no-such-tool"}); got.ExitCode != 127 || !strings.Contains(got.Stderr, "not found") {
		t.Errorf("a missing command: %+v, want exit 127 and the shell's complaint", got)
	}
	_, err := le.ExecCommand(context.Background(), le.owner, id, sandbox.CommandRequest{Command: "  "})
	wantKind(t, err, sandbox.ErrInvalid)
	logs, _ := le.Logs(context.Background(), id, 0)
	if last := logs[len(logs)-1]; last.Tool != "execute_command" || last.ExitCode == nil || *last.ExitCode != 127 {
		t.Errorf("the activity log's last entry %+v, want the last command with its exit code", last)
	}
}

// TestLogicExecTimeout: a command that hangs past its timeout is killed
// (its whole call, through the engine's kill of its process group: a
// cancelled exec kills nothing by itself), and the result says so: what it
// printed, TimedOut, exit code -1, a note in stderr, and a notice.
func TestLogicExecTimeout(t *testing.T) {
	le := newLogicEngine(t)
	id := le.create(t, sandbox.CreateRequest{}).ID
	procs := make(chan *fakeruntime.Proc, 1)
	le.rt.SetHandler(hangs(procs))
	w := le.Watch(context.Background())
	start := time.Now()
	got := le.run(t, id, sandbox.CommandRequest{Command: "hang", Timeout: 300 * time.Millisecond})
	waitKilled(t, <-procs, "after the timeout")
	if !got.TimedOut || got.ExitCode != -1 || got.Outcome.End != sandbox.TimedOut || got.Stdout != "waiting\n" ||
		!strings.Contains(got.Stderr, "timed out after 300ms; the process group was killed") {
		t.Errorf("result %+v", got)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > seconds {
		t.Errorf("the call took %s for a 300ms timeout", took)
	}
	waitSnapshot(t, w, "a timeout notice", func(s sandbox.Snapshot) bool {
		return len(s.Notices) == 1 && s.Notices[0].SandboxID == id && s.Notices[0].Title == "Command timed out"
	})
	if got := le.run(t, id, sandbox.CommandRequest{Command: "echo still here"}); got.Stdout != "still here\n" {
		t.Errorf("the next call: %+v", got)
	}
}

// TestLogicExecCancelled: a call whose caller gives up is cancelled: the
// error says so and the process is killed.
func TestLogicExecCancelled(t *testing.T) {
	le := newLogicEngine(t)
	id := le.create(t, sandbox.CreateRequest{}).ID
	procs := make(chan *fakeruntime.Proc, 1)
	le.rt.SetHandler(hangs(procs))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := le.ExecCommand(ctx, le.owner, id, sandbox.CommandRequest{Command: "hang", Timeout: time.Minute, Wait: time.Minute})
		errc <- err
	}()
	p := <-procs
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}
	waitKilled(t, p, "after the cancel")
}

// TestLogicExecOutputCapped: output past limits.output_bytes is cut for
// the model (the result says it was), and kept longer in the activity log.
func TestLogicExecOutputCapped(t *testing.T) {
	const limit = 1024
	le := newLogicEngine(t, func(c *config.Config) { c.Limits.OutputBytes = limit; c.Limits.LogOutputBytes = 4 * limit })
	id := le.create(t, sandbox.CreateRequest{}).ID
	le.rt.SetHandler(func(p *fakeruntime.Proc) int {
		if p.Script() != "flood" {
			return p.Builtin()
		}
		for range 64 {
			io.WriteString(p.Stdout, strings.Repeat("x", 1023)+"\n")
		}
		io.WriteString(p.Stderr, "short\n")
		return 0
	})
	got := le.run(t, id, sandbox.CommandRequest{Command: "flood"})
	if !got.Truncated || len(got.Stdout) > limit || len(got.Stdout) < limit/2 || !strings.HasPrefix(got.Stdout, "xxx") {
		t.Errorf("flood: truncated %v, %d bytes of stdout; want it cut to at most %d", got.Truncated, len(got.Stdout), limit)
	}
	if got.Stderr != "short\n" || got.ExitCode != 0 {
		t.Errorf("flood's stderr %q, exit %d", got.Stderr, got.ExitCode)
	}
	logs, _ := le.Logs(context.Background(), id, 0)
	if n := len(logs[len(logs)-1].Stdout); n <= limit || n > 4*limit {
		t.Errorf("the activity log kept %d bytes, want more than the model's %d and at most %d", n, limit, 4*limit)
	}
	if got := le.run(t, id, sandbox.CommandRequest{Command: "echo small"}); got.Truncated || got.Stdout != "small\n" {
		t.Errorf("a small output after the flood: %+v", got)
	}
}

// TestLogicExecKilledForMemory: a command killed by the OOM killer is
// reported as killed for memory, with the sandbox's limit, from the
// cgroup's count; a plain kill -9 (exit 137, no count) is not.
func TestLogicExecKilledForMemory(t *testing.T) {
	le := newLogicEngine(t)
	info := le.create(t, sandbox.CreateRequest{MemoryMB: 256})
	le.rt.SetHandler(func(p *fakeruntime.Proc) int {
		switch p.Script() {
		case "eat":
			return p.OOMKill()
		case "die9":
			return 137
		case "sink": // gVisor's answer to the limit: the whole sandbox dies
			go le.rt.Die(p.ContainerID, 137, true)
			<-p.Done()
			return 137
		}
		return p.Builtin()
	})
	got := le.run(t, info.ID, sandbox.CommandRequest{Command: "eat"})
	if got.ExitCode != 137 || got.Outcome.End != sandbox.KilledForMemory || got.Outcome.MemoryMB != 256 ||
		!strings.Contains(got.Stderr, "killed for memory: the sandbox's 256 MB limit was reached") {
		t.Errorf("OOM-killed command: %+v", got)
	}
	if got := le.run(t, info.ID, sandbox.CommandRequest{Command: "die9"}); got.ExitCode != 137 || got.Outcome.End != sandbox.Finished {
		t.Errorf("a SIGKILL that was not the OOM killer's: %+v, want a plain exit 137", got)
	}
	if got := le.run(t, info.ID, sandbox.CommandRequest{Command: "sink"}); got.ExitCode != 137 || got.Outcome.End != sandbox.KilledForMemory {
		t.Errorf("a sandbox killed whole for memory: %+v, want exit 137, killed for memory", got)
	}
}

// TestLogicExecCodeWithoutKernel: in an image where no kernel can start
// (the fake's launcher says it has no python3), execute_code runs the code
// as a fresh process, the code on its stdin; an image with none of the
// language's runtimes is refused as unsupported, naming the image. (The
// kernels' framed protocol itself is not simulated.)
func TestLogicExecCodeWithoutKernel(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	id := le.create(t, sandbox.CreateRequest{}).ID
	hasPython := true
	le.rt.SetHandler(func(p *fakeruntime.Proc) int {
		if !strings.Contains(p.Script(), "command -v \"$r\"") {
			return p.Builtin()
		}
		code, _ := io.ReadAll(p.Stdin)
		if !hasPython {
			return 217 // the code script: none of the runtimes
		}
		if s, ok := strings.CutPrefix(string(code), "print("); ok {
			io.WriteString(p.Stdout, strings.TrimSuffix(s, ")")+"\n")
			return 0
		}
		io.WriteString(p.Stderr, "SyntaxError\n")
		return 1
	})
	out, err := le.ExecCode(ctx, le.owner, id, sandbox.CodeRequest{Code: "print(42)"})
	if err != nil || out.Result.Stdout != "42\n" || out.Result.ExitCode != 0 || out.Result.Outcome.Kernel != sandbox.KernelKept {
		t.Errorf("code without a kernel: %+v, %v", out.Result, err)
	}
	if out, err := le.ExecCode(ctx, le.owner, id, sandbox.CodeRequest{Code: "oops"}); err != nil || out.Result.ExitCode != 1 || out.Result.Stderr != "SyntaxError\n" {
		t.Errorf("failing code: %+v, %v", out.Result, err)
	}
	hasPython = false
	_, err = le.ExecCode(ctx, le.owner, id, sandbox.CodeRequest{Code: "print(1)"})
	wantKind(t, err, sandbox.ErrUnsupported)
	if err != nil && !strings.Contains(err.Error(), logicImage) {
		t.Errorf("the refusal %q does not name the image", err)
	}
}
