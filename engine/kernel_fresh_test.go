package engine

import (
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// freshPython prints what a program run by `python3 -c` sees of its
// interpreter. The python kernel's interpreter is a fork of its supervisor
// (no second interpreter start on a new sandbox's first call), which must
// not show: no supervisor globals, arguments, flags or descriptors.
const freshPython = `print(sorted(k for k in globals() if not k.startswith("_sandtray")))
import ctypes, os, pickle, sys
print(sys.argv, sys.flags.no_site, sys.modules["__main__"].__dict__ is globals())
def g(): return 1
print(pickle.loads(pickle.dumps(g)) is g, repr(sys.stdin.read()))
fds = sorted(int(n) for n in os.listdir("/proc/self/fd") if os.path.exists("/proc/self/fd/" + n))
print(fds)
print("dumpable", ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))
`

// TestPythonKernelIsAFreshInterpreter: the first call in a new sandbox, and
// a call after a restart, run code in what looks like a new `python3 -c`:
// the names python gives __main__ (and the kernel's own), argv ["-c"], the
// default flags (multiprocessing passes them on), functions that pickle by
// reference to __main__, stdin at EOF, no descriptor but the standard ones
// and the kernel's two (so nothing reaches the engine's channel), and a
// dumpable process (its /proc files its own, as any program's).
func TestPythonKernelIsAFreshInterpreter(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	want := "['__annotations__', '__builtins__', '__doc__', '__loader__', '__name__', '__package__', '__spec__']\n" +
		"['-c'] 0 True\nTrue ''\n[0, 1, 2, 62, 63]\ndumpable 1\n"
	for _, req := range []sandbox.CodeRequest{{Code: freshPython}, {Code: freshPython, Reset: true}} {
		r := te.code(t, id, req)
		if r.Stdout != want || r.ExitCode != 0 {
			t.Errorf("reset %v: stdout\n%s\nexit %d stderr %q; want\n%s", req.Reset, r.Stdout, r.ExitCode, r.Stderr, want)
		}
	}
	// The kernel's programs do not travel in its command line: `ps` in the
	// sandbox lists its two processes (the supervisor and its fork) in a
	// line each, not 20 kB each that push the rest out of the output. PID
	// 1's line, the first kernel's launcher and then the sandbox's init for
	// its whole life (2 kB), is not counted.
	r := te.command(t, id, "sleep 30 & ps -eo pid,args; kill $!")
	var rest strings.Builder
	for line := range strings.Lines(r.Stdout) {
		if f := strings.Fields(line); len(f) > 0 && f[0] != "1" {
			rest.WriteString(line)
		}
	}
	if n := strings.Count(rest.String(), "# Sandtray kernel"); n != 2 || rest.Len() > 4096 || !strings.Contains(rest.String(), "sleep 30") {
		t.Errorf("ps in the sandbox: %d kernel processes, %d bytes besides PID 1's; want 2 in under 4 kB, and the sleep:\n%.2000s", n, rest.Len(), r.Stdout)
	}
}

// TestPythonTracebacksShowTheCells: a traceback shows the lines of the
// cells it goes through, whether the kernel reports the error or the code
// prints one itself, also when the kernel is new (it loads the traceback
// machinery only when something needs it).
func TestPythonTracebacksShowTheCells(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	r := te.code(t, id, sandbox.CodeRequest{Code: "import traceback\ntry:\n    {}['missing']\nexcept KeyError:\n    traceback.print_exc()\nprint('caught')"})
	if r.Stdout != "caught\n" || !strings.Contains(r.Stderr, "{}['missing']") || !strings.Contains(r.Stderr, "<cell 1>") {
		t.Errorf("a traceback the code prints: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "def f():\n    return 1 / 0", Reset: true})
	if r.ExitCode != 0 {
		t.Fatalf("define f: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "x = 1\nf()"})
	for _, want := range []string{"ZeroDivisionError", "<cell 2>", "    f()", "<cell 1>", "return 1 / 0"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the kernel's traceback lacks %q: %q", want, r.Stderr)
		}
	}
	if r.ExitCode != 1 || strings.Contains(r.Stderr, "_sandtray") {
		t.Errorf("the kernel's traceback: exit %d, stderr %q; want exit 1 and only the code's frames", r.ExitCode, r.Stderr)
	}
}
