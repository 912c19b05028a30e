package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/dockertest"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// kernelExecCounter counts the execs that start a kernel.
type kernelExecCounter struct {
	runtime.Runtime
	n *atomic.Int32
}

func (c kernelExecCounter) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	if strings.Contains(strings.Join(o.Cmd, " "), "sandtray-kernel") {
		c.n.Add(1)
	}
	return c.Runtime.Exec(ctx, id, o)
}

// newCountingEngine is a test engine whose kernel execs are counted.
func newCountingEngine(t *testing.T) (*testEngine, *atomic.Int32) {
	var n atomic.Int32
	te := newTestEngineOn(t, func(d runtime.Runtime) runtime.Runtime { return kernelExecCounter{d, &n} })
	te.attachFirst = true // also where the daemon is not Docker Engine (engine.go)
	return te, &n
}

// initLine is PID 1's line in processesOf's list when it is the first
// kernel's launcher: its supervisor, then the sandbox's reaper.
var initLine = regexp.MustCompile(`(?m)^ +1 \S+ +python3 -c # Sandtray init`)

// processesOf is `ps -eo pid,stat,args` in sandbox id, through Docker.
func (te *testEngine) processesOf(t *testing.T, id string) string {
	t.Helper()
	var out bytes.Buffer
	if _, err := te.docker.Exec(context.Background(), id, runtime.ExecOptions{Cmd: []string{"ps", "-eo", "pid,stat,args"}, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// forgeFromOutside tries, from a command (an exec of its own), to reach
// the first kernel's channel through PID 1's descriptors and memory.
const forgeFromOutside = `for f in 0 1 2; do (printf 'O\000\000\000\006FORGED' > /proc/1/fd/$f) 2>/dev/null && echo "opened $f"; done
(printf 'O\000\000\000\006FORGED' > /proc/1/root/dev/stdout) 2>/dev/null && echo "opened /dev/stdout"
ls /proc/1/fd/ >/dev/null 2>&1 && ls -l /proc/1/fd/ 2>/dev/null | grep -q pipe && echo "fd links readable"
cat /proc/1/mem >/dev/null 2>&1 && echo "mem readable"
echo done`

// forgeFromKernel tries the same from the kernel's own code, at every
// process's descriptors it can open (its own aside).
const forgeFromKernel = `import os
opened = []
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        fds = os.listdir("/proc/%s/fd" % pid)
    except OSError:
        fds = ["0", "1", "2"]
    for fd in fds:
        try:
            w = os.open("/proc/%s/fd/%s" % (pid, fd), os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(w, b"O\x00\x00\x00\x06FORGED")
        except OSError:
            pass
        os.close(w)
        opened.append("%s/%s" % (pid, fd))
import sys
print("ppid", os.getppid(), "opened", opened, file=sys.stderr)
`

// TestFirstKernelStartsWithItsContainer: a new sandbox's first python
// kernel is its container's init, on the container's attachment, and no
// exec starts it; no process in the sandbox can write to its channel, nor
// read it; the container logs nothing. Its later kernels are execs, and
// its init reaps orphans.
func TestFirstKernelStartsWithItsContainer(t *testing.T) {
	te, execs := newCountingEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID

	r := te.code(t, id, sandbox.CodeRequest{Code: "import os\nx = 1\nprint(os.getppid(), os.getcwd())"})
	if r.Stdout != "1 /workspace\n" || r.ExitCode != 0 || execs.Load() != 0 {
		t.Fatalf("first call: %+v, %d kernel execs; want its kernel's supervisor as PID 1, in the workdir, and no exec", r, execs.Load())
	}
	if out := te.command(t, id, forgeFromOutside); out.Stdout != "done\n" {
		t.Errorf("a command reached PID 1's channel: %q", out.Stdout)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: forgeFromKernel})
	if r.Stdout != "" || !strings.Contains(r.Stderr, "ppid 1 opened []") {
		t.Errorf("the kernel's code reached a channel: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "print(x)"})
	if r.Stdout != "1\n" || r.KernelRestarted {
		t.Errorf("after the forgery attempts: %+v", r)
	}
	te.command(t, id, "sh -c 'sleep 0.1 & exit'; sh -c 'sleep 0.1 & exit'")
	eventually(t, 10*time.Second, "orphans reaped by the first kernel's supervisor", func() bool {
		return !strings.Contains(te.processesOf(t, id), " Z")
	})
	if ps := te.processesOf(t, id); !initLine.MatchString(ps) {
		t.Errorf("PID 1 is not the first kernel's supervisor:\n%s", ps)
	}

	raw, err := te.docker.InspectRaw(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		LogPath    string
		HostConfig struct{ LogConfig struct{ Type string } }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.HostConfig.LogConfig.Type != "none" || doc.LogPath != "" {
		t.Errorf("the container logs its channel: log driver %q, log path %q", doc.HostConfig.LogConfig.Type, doc.LogPath)
	}

	r = te.code(t, id, sandbox.CodeRequest{Code: "import os\nprint('x' in globals(), os.getppid() != 1)", Reset: true})
	if r.Stdout != "False True\n" || execs.Load() != 1 {
		t.Errorf("after a reset: %+v, %d kernel execs; want a fresh kernel, exec'd", r, execs.Load())
	}
	if ps := te.processesOf(t, id); !initLine.MatchString(ps) || strings.Count(ps, "# Sandtray init") != 1 {
		t.Errorf("once the first kernel ended, PID 1 is not the same init, alone:\n%s", ps)
	}
	te.command(t, id, "sh -c 'sleep 0.1 & exit'; sh -c 'sleep 0.1 & exit'")
	eventually(t, 10*time.Second, "orphans reaped by the sandbox's init", func() bool {
		return !strings.Contains(te.processesOf(t, id), " Z")
	})
}

// TestFirstKernelDiesThenExecs: when the first kernel's interpreter exits,
// the run says so, and the next call gets an exec'd kernel.
func TestFirstKernelDiesThenExecs(t *testing.T) {
	te, execs := newCountingEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "sh -c 'sleep 0.1 & exit'") // an orphan for the first kernel's init
	r := te.code(t, id, sandbox.CodeRequest{Code: "import os\nos._exit(3)"})
	if r.ExitCode != 3 {
		t.Errorf("exit of the first kernel: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "import os\nprint(os.getppid() != 1)"})
	if r.Stdout != "True\n" || !r.KernelRestarted || execs.Load() != 1 {
		t.Errorf("after the first kernel died: %+v, %d kernel execs", r, execs.Load())
	}
	if ps := te.processesOf(t, id); strings.Contains(ps, " Z") || strings.Count(ps, "# Sandtray kernel") != 2 {
		t.Errorf("processes after the first kernel died:\n%s", ps)
	}
}

// TestFirstKernelEndsWithItsAttachment: when the engine's attachment goes
// (the engine ends, or dies), the first kernel ends: no kernel is left
// behind in the sandbox, which runs on with the same init.
func TestFirstKernelEndsWithItsAttachment(t *testing.T) {
	te := newTestEngine(t)
	te.attachFirst = true // also where the daemon is not Docker Engine (engine.go)
	ctx := context.Background()
	dropped := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	closed := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	for _, id := range []string{dropped, closed} {
		if r := te.code(t, id, sandbox.CodeRequest{Code: "import os\nprint(os.getppid())"}); r.Stdout != "1\n" {
			t.Fatalf("first call: %+v", r)
		}
	}
	gone := func(id, what string) {
		eventually(t, 10*time.Second, what, func() bool {
			ps := te.processesOf(t, id)
			return !strings.Contains(ps, "# Sandtray kernel") && initLine.MatchString(ps) && strings.Count(ps, "# Sandtray init") == 1
		})
		if ctr, err := te.docker.Inspect(ctx, id); err != nil || ctr.State != "running" {
			t.Errorf("the sandbox after its first kernel ended: %q, %v", ctr.State, err)
		}
	}
	te.kernels.AbortSoon(dropped) // its connection is closed, as when the engine dies
	gone(dropped, "the first kernel gone once its attachment's connection was closed")
	if err := te.Close(ctx); err != nil {
		t.Fatal(err)
	}
	gone(closed, "the first kernel gone with the engine")
}

// TestFirstKernelWithoutPython: in an image without python3 the main
// command becomes the shell init at once (a new sandbox does not wait for
// a kernel), commands and orphans are as in any sandbox, and the code's
// calls take the exec path, as they did before.
func TestFirstKernelWithoutPython(t *testing.T) {
	repo, _ := dockertest.ImageRepo(t) // first: its cleanup runs after the sandboxes'
	te := newTestEngine(t)
	ctx := context.Background()
	tag := repo + ":nopython"
	var ctxTar, out bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	dockerfile := "FROM " + te.cfg.DefaultImage + "\nRUN rm -f /usr/bin/python3* /usr/local/bin/python3*\n"
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(dockerfile)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	if _, err := te.docker.BuildImage(ctx, &ctxTar, tag, &out); err != nil {
		t.Fatalf("build an image without python: %v\n%s", err, out.String())
	}

	start := time.Now()
	id := te.create(t, sandbox.CreateRequest{Image: tag}).ID
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("creating a sandbox without python took %s", took)
	}
	if r := te.code(t, id, sandbox.CodeRequest{Language: "bash", Code: "echo hi"}); r.Stdout != "hi\n" {
		t.Errorf("bash code without python: %+v", r)
	}
	te.command(t, id, "sh -c 'sleep 0.1 & exit'")
	eventually(t, 10*time.Second, "orphans reaped by the shell init", func() bool {
		ps := te.processesOf(t, id)
		return !strings.Contains(ps, " Z") && strings.Contains(ps, "sleep infinity")
	})
	if out, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Code: "print(1)"}); err == nil && out.Result.ExitCode == 0 {
		t.Errorf("python code without python: %+v", out.Result)
	}
}

// TestFirstKernelSandboxStopsAndStarts: a sandbox made with its first
// kernel stops at once (its init ends on SIGTERM), whether it runs that
// kernel or, started again with no one attached, waits for one; its calls
// then take exec'd kernels.
func TestFirstKernelSandboxStopsAndStarts(t *testing.T) {
	te, execs := newCountingEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	if r := te.code(t, id, sandbox.CodeRequest{Code: "x = 1\nprint(x)"}); r.Stdout != "1\n" {
		t.Fatalf("first call: %+v", r)
	}
	for round := range 2 {
		start := time.Now()
		if _, err := te.Stop(ctx, te.owner, id); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("stop %d took %s: its init did not end on SIGTERM", round, took)
		}
		r := te.code(t, id, sandbox.CodeRequest{Code: "import os\nprint(os.getppid() != 1)"})
		if r.Stdout != "True\n" || execs.Load() != int32(round+1) {
			t.Errorf("after stop %d: %+v, %d kernel execs", round, r, execs.Load())
		}
	}
}
