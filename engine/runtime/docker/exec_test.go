package docker_test

import (
	"bytes"
	"context"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

var execTrue = runtime.ExecOptions{Cmd: []string{"true"}}

func sh(script string) runtime.ExecOptions {
	return runtime.ExecOptions{Cmd: []string{"sh", "-c", script}}
}

func TestExec(t *testing.T) {
	c, id := newSandbox(t)
	tests := []struct {
		name       string
		opts       runtime.ExecOptions
		wantCode   int
		wantStdout string // exact, unless stdoutHas is set
		stdoutHas  string
		wantStderr string // substring
	}{
		{name: "separate streams", opts: sh("echo out; echo err >&2"), wantStdout: "out\n", wantStderr: "err"},
		{name: "exit code", opts: sh("exit 3"), wantCode: 3},
		{name: "not found is 127", opts: sh("no-such-command"), wantCode: 127, wantStderr: "not found"},
		{name: "not executable is 126", opts: sh("/etc/passwd"), wantCode: 126, wantStderr: "denied"},
		// Docker itself reports a process it cannot start as 126, with its reason on stdout.
		{name: "missing binary is 126 from Docker", opts: runtime.ExecOptions{Cmd: []string{"no-such-binary"}}, wantCode: 126, stdoutHas: "executable file not found"},
		// Docker is always given "/"; a workdir that cannot be entered is said, and the exec runs in "/".
		{name: "missing workdir runs in / with a note", opts: runtime.ExecOptions{Cmd: []string{"pwd"}, Workdir: "/no/such/dir"}, wantStdout: "/\n", wantStderr: "cannot enter the workdir /no/such/dir"},
		{name: "env", opts: runtime.ExecOptions{Cmd: []string{"sh", "-c", `printf %s "$GREETING"`}, Env: []string{"GREETING=hi there"}}, wantStdout: "hi there"},
		{name: "workdir", opts: runtime.ExecOptions{Cmd: []string{"pwd"}, Workdir: "/tmp"}, wantStdout: "/tmp\n"},
		{name: "no workdir is /, not the container's", opts: runtime.ExecOptions{Cmd: []string{"pwd"}}, wantStdout: "/\n"},
		{name: "user", opts: runtime.ExecOptions{Cmd: []string{"id", "-un"}, User: "nobody"}, wantStdout: "nobody\n"},
		{name: "nil writers discard", opts: runtime.ExecOptions{Cmd: []string{"echo", "dropped"}}},
		{name: "large output", opts: runtime.ExecOptions{Cmd: []string{"head", "-c", "3000000", "/dev/zero"}}, wantStdout: strings.Repeat("\x00", 3000000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if tc.name != "nil writers discard" {
				tc.opts.Stdout, tc.opts.Stderr = &stdout, &stderr
			}
			code, err := c.Exec(testCtx(t), id, tc.opts)
			if err != nil {
				t.Fatalf("Exec(%q): %v", tc.opts.Cmd, err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			if got := stdout.String(); tc.stdoutHas != "" && !strings.Contains(got, tc.stdoutHas) {
				t.Errorf("stdout %q, want it to contain %q", got, tc.stdoutHas)
			} else if tc.stdoutHas == "" && got != tc.wantStdout {
				t.Errorf("stdout %q (%d bytes), want %d bytes", abbrev(got), len(got), len(tc.wantStdout))
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestExecStdinBinaryRoundTrip(t *testing.T) {
	c, id := newSandbox(t)
	in := make([]byte, 1<<20)
	for i := range in {
		in[i] = byte(i * 7)
	}
	var stdout, stderr bytes.Buffer
	code, err := c.Exec(testCtx(t), id, runtime.ExecOptions{
		Cmd: []string{"cat"}, Stdin: bytes.NewReader(in), Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil || code != 0 {
		t.Fatalf("Exec(cat) = %d, %v; stderr %q", code, err, stderr.String())
	}
	if !bytes.Equal(stdout.Bytes(), in) {
		t.Errorf("cat returned %d bytes, want the %d bytes sent unchanged", stdout.Len(), len(in))
	}
}

func TestExecCancelReturnsPromptly(t *testing.T) {
	c, id := newSandbox(t)
	for _, tc := range []struct {
		name  string
		stdin bool
	}{{"without stdin", false}, {"with stdin", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(testCtx(t), 500*time.Millisecond)
			defer cancel()
			o := runtime.ExecOptions{Cmd: []string{"sleep", "100"}}
			if tc.stdin {
				o.Stdin = strings.NewReader("ignored")
			}
			start := time.Now()
			code, err := c.Exec(ctx, id, o)
			// Generous: this checks that Exec gives up, not how fast it is.
			if elapsed := time.Since(start); elapsed > 20*time.Second {
				t.Errorf("Exec returned after %v, long after ctx ended", elapsed)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Exec(sleep 100) = %d, %v; want an error wrapping context.DeadlineExceeded", code, err)
			}
			if errors.Is(err, sandbox.ErrUnavailable) {
				t.Errorf("Exec timeout %v must not read as an unavailable daemon", err)
			}
		})
	}
}

func TestExecStoppedContainerConflicts(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	id, err := c.Create(ctx, createOptions(t))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := c.Exec(ctx, id, execTrue); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("Exec in a created, never started container: err = %v, want ErrConflict", err)
	}
}

// TestExecLeavesNoGoroutines runs the execs most likely to strand the stdin
// copier: a process that exits without reading a large stdin, and a cancelled
// exec blocked on stdin, then checks the goroutine count comes back down.
func TestExecLeavesNoGoroutines(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	run(t, c, id, "true") // warm the client's connection pool
	_ = c.Close()
	before := goruntime.NumGoroutine()

	big := bytes.Repeat([]byte("x"), 8<<20)
	for range 3 {
		if _, err := c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"true"}, Stdin: bytes.NewReader(big)}); err != nil {
			t.Fatalf("Exec(true) with unread stdin: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := c.Exec(short, id, runtime.ExecOptions{Cmd: []string{"sleep", "100"}, Stdin: bytes.NewReader(big)})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cancelled Exec: err = %v, want context.DeadlineExceeded", err)
		}
	}
	_ = c.Close()

	deadline := time.Now().Add(10 * time.Second)
	for goruntime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := goruntime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before the execs, %d after:\n%s", before, after, buf[:goruntime.Stack(buf, true)])
	}
}

func abbrev(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
