package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/internal/kernel"
	"github.com/sandtray/sandtray/engine/internal/safetext"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// code runs src in the sandbox id and fails the test on an error.
func (te *testEngine) code(t *testing.T, id string, req sandbox.CodeRequest) sandbox.ExecResult {
	t.Helper()
	out, err := te.ExecCode(context.Background(), te.owner, id, req)
	if err != nil {
		t.Fatalf("execute %s %q: %v", req.Language, req.Code, err)
	}
	return out.Result
}

func TestKernelStatePersists(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	steps := []struct {
		lang, code, want string
	}{
		{"python", "import math\nx = 41\ndef f(v): return v + 1", ""},
		{"python", "print(f(x), math.floor(2.5))", "42 2\n"},
		{"bash", "cd /tmp && export GREETING=hi && n=3 && shout() { echo \"$1!\"; }", ""},
		{"bash", "echo \"$PWD $GREETING $n\"; shout hey; sh -c 'echo child sees $GREETING'", "/tmp hi 3\nhey!\nchild sees hi\n"},
		{"javascript", "let count = 1; var seen = ['a']; function bump() { return ++count; }", ""},
		{"javascript", "bump(); seen.push('b'); console.log(count, seen.join(','))", "2 a,b\n"},
		{"javascript", "await new Promise((r) => setTimeout(r, 50)); console.log('awaited', count)", "awaited 2\n"},
	}
	for _, s := range steps {
		r := te.code(t, id, sandbox.CodeRequest{Language: s.lang, Code: s.code})
		if r.Stdout != s.want || r.ExitCode != 0 || r.KernelRestarted {
			t.Errorf("%s %q: stdout %q exit %d stderr %q restarted %v; want %q", s.lang, s.code, r.Stdout, r.ExitCode, r.Stderr, r.KernelRestarted, s.want)
		}
	}
	r := te.code(t, id, sandbox.CodeRequest{Code: "print('x' in globals())", Reset: true})
	if r.Stdout != "False\n" || r.KernelRestarted {
		t.Errorf("after reset: %+v; want a fresh kernel without x, not reported as a lost state", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Language: "bash", Code: "echo \"$PWD\""})
	if r.Stdout != "/tmp\n" {
		t.Errorf("resetting python must leave bash alone: %+v", r)
	}
}

// TestKernelTimeoutInterrupts: a run past its timeout gets KeyboardInterrupt
// and the kernel, with its state, lives on.
func TestKernelTimeoutInterrupts(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.code(t, id, sandbox.CodeRequest{Code: "kept = 'still here'"})
	r := te.code(t, id, sandbox.CodeRequest{Code: "print('looping', flush=True)\nwhile True: pass", Timeout: time.Second})
	if !r.TimedOut || r.Stdout != "looping\n" || !strings.Contains(r.Stderr, "KeyboardInterrupt") ||
		!strings.Contains(r.Stderr, "kernel kept its state") || r.ExitCode != 130 {
		t.Errorf("interrupted run: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "print(kept)"})
	if r.Stdout != "still here\n" || r.KernelRestarted {
		t.Errorf("after the interrupt: %+v; want the state kept", r)
	}
}

// TestKernelKilledWhenInterruptIgnored: code that ignores SIGINT is killed
// with its kernel; the next call runs in a fresh one and says state was lost.
func TestKernelKilledWhenInterruptIgnored(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.code(t, id, sandbox.CodeRequest{Code: "kept = 1"})
	started := time.Now()
	r := te.code(t, id, sandbox.CodeRequest{Code: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass", Timeout: time.Second})
	if !r.TimedOut || !strings.Contains(r.Stderr, "kernel was killed") {
		t.Errorf("stubborn run: %+v", r)
	}
	if d := time.Since(started); d > time.Second+2*kernel.Grace+2*time.Second {
		t.Errorf("killing took %s", d)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "print('kept' in globals())"})
	if r.Stdout != "False\n" || !r.KernelRestarted || !strings.Contains(r.Stderr, "state from earlier calls is gone") {
		t.Errorf("next call: %+v; want a fresh kernel, reported", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "print(2)"})
	if r.Stdout != "2\n" || r.KernelRestarted {
		t.Errorf("the call after: %+v; the restart is reported once", r)
	}
}

// TestKernelExitIsReported: an interpreter that exits ends its kernel; the
// next call says state was lost. SystemExit and process.exit do not.
func TestKernelExitIsReported(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	r := te.code(t, id, sandbox.CodeRequest{Code: "v = 1\nraise SystemExit(3)"})
	if r.ExitCode != 3 || r.KernelRestarted {
		t.Errorf("SystemExit: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Language: "javascript", Code: "process.exit(5)"})
	if r.ExitCode != 5 {
		t.Errorf("process.exit: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "import os\nprint(v, flush=True)\nos._exit(4)"})
	if r.ExitCode != 4 || r.Stdout != "1\n" || !strings.Contains(r.Stderr, "kernel exited with code 4") {
		t.Errorf("os._exit: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Language: "bash", Code: "exit 6"})
	if r.ExitCode != 6 {
		t.Errorf("bash exit: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "print('v' in globals())"})
	if r.Stdout != "False\n" || !r.KernelRestarted {
		t.Errorf("after the exit: %+v", r)
	}
}

// TestKernelStartsInTheWorkdir: a kernel starts in the sandbox's workdir,
// and in "/" once the workdir is gone, as any exec does.
func TestKernelStartsInTheWorkdir(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	const cwd = "import os\nprint(os.getcwd())"
	if r := te.code(t, id, sandbox.CodeRequest{Code: cwd}); r.Stdout != "/workspace\n" {
		t.Errorf("a new kernel's folder: %+v", r)
	}
	if r := te.command(t, id, "cd / && rm -rf /workspace && echo gone"); r.Stdout != "gone\n" {
		t.Fatalf("remove the workdir: %+v", r)
	}
	if r := te.code(t, id, sandbox.CodeRequest{Code: cwd, Reset: true}); r.Stdout != "/\n" || r.ExitCode != 0 {
		t.Errorf("a kernel started without its workdir: %+v, want it in /", r)
	}
}

// TestKernelFramingCannotBeForged: output that looks like frames is output,
// and the private descriptors are closed to user code or do not matter.
func TestKernelFramingCannotBeForged(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	ctx := context.Background()
	out, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Code: forgeryPython})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	// The forged frames come back as output (made terminal-safe like any
	// output) and the run goes on to its own end.
	wantOut := safetext.Terminal("D\x00\x00\x00\x1b{\"id\":\"x\",\"exit\":7}X\x00\x00\x00\x02{}\nsupervisor fd: PermissionError\nstill running\n")
	if r.Stdout != wantOut || r.ExitCode != 0 || r.KernelRestarted {
		t.Errorf("forgery run: stdout %q exit %d stderr %q; want %q and exit 0", r.Stdout, r.ExitCode, r.Stderr, wantOut)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "print(after)"})
	if r.Stdout != "forged\n" || r.KernelRestarted {
		t.Errorf("the kernel after a forgery: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Language: "bash", Code: "echo hi >&63; echo closed $?; ls /proc/$$/fd | grep -c '^6[23]$'"})
	if r.Stdout != "closed 1\n0\n" {
		t.Errorf("bash sees its kernel's descriptors: %+v", r)
	}
}

// forgeryPython prints frame-like bytes, writes a well-formed but foreign
// end of run to the done pipe, and tries the supervisor's protocol channel.
const forgeryPython = `import os, sys
sys.stdout.buffer.write(b'D\x00\x00\x00\x1b{"id":"x","exit":7}X\x00\x00\x00\x02{}\n')
sys.stdout.flush()
os.write(63, b"0123456789abcdef 9 -\n")
try:
    open("/proc/%d/fd/1" % os.getppid(), "wb")
    print("supervisor fd: open")
except OSError as e:
    print("supervisor fd:", type(e).__name__)
import time; time.sleep(0.2)
after = "forged"
print("still running")
`

func TestKernelCallsTakeTurns(t *testing.T) {
	te := newTestEngine(t)
	a := te.create(t, sandbox.CreateRequest{}).ID
	b := te.create(t, sandbox.CreateRequest{}).ID
	for _, id := range []string{a, b} {
		te.code(t, id, sandbox.CodeRequest{Code: "import time"}) // start the kernels
	}
	both := func(first, second string) time.Duration {
		started := time.Now()
		var wg sync.WaitGroup
		for _, id := range []string{first, second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := te.ExecCode(context.Background(), te.owner, id, sandbox.CodeRequest{Code: "time.sleep(1)"}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		return time.Since(started)
	}
	if d := both(a, a); d < 2*time.Second {
		t.Errorf("two 1 s calls on one kernel took %s; want them in turn (≥ 2 s)", d)
	}
	if d := both(a, b); d >= 1800*time.Millisecond {
		t.Errorf("two 1 s calls on two sandboxes took %s; want them in parallel (< 1.8 s)", d)
	}
}

// TestKernelCancelAndJobStopInterrupt: a cancelled call and a stopped job
// interrupt the code as a timeout does; the kernel keeps its state.
func TestKernelCancelAndJobStopInterrupt(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.code(t, id, sandbox.CodeRequest{Code: "import time\nkept = 7"})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Code: "time.sleep(100)"}); err == nil {
		t.Fatal("a cancelled call should return an error")
	}
	out, err := te.ExecCode(context.Background(), te.owner, id, sandbox.CodeRequest{Code: "print('working', flush=True)\ntime.sleep(100)", Background: true})
	if err != nil || out.JobID == "" {
		t.Fatalf("background start: %+v, %v", out, err)
	}
	eventually(t, 10*time.Second, "the job printed nothing", func() bool {
		st, _ := te.JobStatus(context.Background(), out.JobID, 0)
		return st.Output != ""
	})
	st, err := te.JobStop(context.Background(), out.JobID)
	if err != nil || st.Status != sandbox.JobStopped {
		t.Errorf("job_stop: %+v, %v", st, err)
	}
	if st, _ = te.JobStatus(context.Background(), out.JobID, 0); !strings.Contains(st.Output, "KeyboardInterrupt") {
		t.Errorf("stopped job's output %q; want the interrupt", st.Output)
	}
	r := te.code(t, id, sandbox.CodeRequest{Code: "print(kept)"})
	if r.Stdout != "7\n" || r.KernelRestarted {
		t.Errorf("after cancel and job_stop: %+v; want the state kept", r)
	}
}

// TestWarmKernel: a kernel started ahead (as the warm pool may) serves the
// first call.
func TestWarmKernel(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	if err := te.kernels.Warm(context.Background(), poolHost{te.Engine}.Target(id, "/workspace"), "python"); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	r := te.code(t, id, sandbox.CodeRequest{Code: "print(1)"})
	if r.Stdout != "1\n" || r.KernelRestarted {
		t.Errorf("first call on a warmed kernel: %+v", r)
	}
	t.Logf("first call took %s", time.Since(started))
}

// TestNoKernelStartsWhileClosing: once Close has taken the kernels, a call
// that races it gets an error saying so, and starts no kernel that Close
// would never wait for.
func TestNoKernelStartsWhileClosing(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.kernels.CloseAll()
	_, err := te.ExecCode(context.Background(), te.owner, id, sandbox.CodeRequest{Code: "print(1)"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("a call after the kernels closed: %v, want the engine's shutting down", err)
	}
	if started := te.kernels.Started(); len(started) != 0 {
		t.Errorf("kernels started after close: %v", started)
	}
}

// TestKernelReapsWhatItsCodeForked: children the code forks and never waits
// for are reaped after its run, even when a Popen object it already waited
// for holds the same pid (the sandbox gives pids out again at once), while a
// Popen still waiting keeps its own.
func TestKernelReapsWhatItsCodeForked(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	code := `import os, subprocess, time
done = subprocess.Popen(['true']); done.wait()
pid = os.fork()
if pid == 0:
    os._exit(0)
done.pid = pid  # the waited-for process's pid, given out again
live = subprocess.Popen(['sh', '-c', 'exit 3'])
time.sleep(0.5)
print('forked')`
	if r := te.code(t, id, sandbox.CodeRequest{Code: code}); r.Stdout != "forked\n" {
		t.Fatalf("fork: %+v", r)
	}
	eventually(t, 5*time.Second, "the unwaited child reaped", func() bool {
		r := te.command(t, id, `ps -eo stat=,comm= | grep -c '^Z' || true`)
		return strings.TrimSpace(r.Stdout) == "1" // live's, which its Popen will wait for
	})
	if r := te.code(t, id, sandbox.CodeRequest{Code: "print(live.wait())"}); r.Stdout != "3\n" {
		t.Errorf("the code's own Popen lost its child: %+v", r)
	}
}
