package agentclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testbuild"
)

var (
	agentOnce sync.Once
	agentBin  string
	agentErr  error
)

// agentBinary builds sandtray-agent once per test binary.
func agentBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the agent runs on Linux only")
	}
	agentOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sandtray-agent-test")
		if err != nil {
			agentErr = err
			return
		}
		agentBin = filepath.Join(dir, "sandtray-agent")
		cmd := testbuild.Command(agentBin, "github.com/sandtray/sandtray/app/cmd/sandtray-agent")
		if out, err := cmd.CombinedOutput(); err != nil {
			agentErr = fmt.Errorf("build the agent: %v\n%s", err, out)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentBin
}

// pipeConn is a child's stdout and stdin as one connection.
type pipeConn struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipeConn) Close() error { return errors.Join(p.WriteCloser.Close(), p.ReadCloser.Close()) }

// startAgent runs `sandtray-agent serve` on this host, as a sandbox's
// would run, and returns a session with it.
func startAgent(t *testing.T) (*Session, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(agentBinary(t), "serve")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), pipeConn{out, in}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		_ = cmd.Wait()
	})
	return s, cmd
}

func TestRunReturnsOutputAndExitCode(t *testing.T) {
	s, _ := startAgent(t)
	var out, errOut bytes.Buffer
	x, err := s.Run(context.Background(), Process{Argv: []string{"/bin/sh", "-c", "cat; echo err >&2; exit 3"},
		Stdin: strings.NewReader("hello"), Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	if x.Code != 3 || out.String() != "hello" || errOut.String() != "err\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3, \"hello\", \"err\\n\"", x.Code, out.String(), errOut.String())
	}
}

func TestRunSaysWhenTheProgramIsMissing(t *testing.T) {
	s, _ := startAgent(t)
	_, err := s.Run(context.Background(), Process{Argv: []string{"/nonexistent/sh", "-c", "true"}})
	if !errors.Is(err, ErrNoProgram) || !strings.Contains(err.Error(), "/nonexistent/sh") {
		t.Errorf("err = %v, want ErrNoProgram naming the program", err)
	}
}

// TestRunKillsWhatCarriesTheMarker: what a process left running, detached
// or not, ends with it.
func TestRunKillsWhatCarriesTheMarker(t *testing.T) {
	s, _ := startAgent(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	var out bytes.Buffer
	marker := sandbox.RandomHex(8)
	_, err := s.Run(context.Background(), Process{Argv: []string{"/bin/sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $! >" + pidFile},
		Marker: marker, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, pidFile)
	waitGone(t, pid)
}

// TestCancelKillsTheProcess: a call whose context ends stops its process.
func TestCancelKillsTheProcess(t *testing.T) {
	s, _ := startAgent(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, Process{Argv: []string{"/bin/sh", "-c", "echo $$ >" + pidFile + "; exec sleep 300"}, Marker: "m1"})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the process never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	waitGone(t, readPid(t, pidFile))
}

func readPid(t *testing.T, f string) int {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGone waits for pid to end (a zombie counts as ended).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d still runs", pid)
}

func TestFiles(t *testing.T) {
	s, _ := startAgent(t)
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "f.txt")
	if err := s.Write(ctx, Write{Path: p, Data: strings.NewReader("0123456789"), Size: 10, Mode: 0o600, Parents: true}); err != nil {
		t.Fatal(err)
	}
	data, st, err := s.Read(ctx, p, 2, 5)
	if err != nil || string(data) != "23456" || st.Size != 10 {
		t.Errorf("read = %q, size %d, %v; want \"23456\", 10", data, st.Size, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode = %v, %v; want 0600", fi.Mode(), err)
	}
	if err := s.Write(ctx, Write{Path: p, Data: strings.NewReader("short"), Size: 10}); err == nil {
		t.Error("a write whose data ends early succeeded")
	}
	if b, _ := os.ReadFile(p); string(b) != "0123456789" {
		t.Errorf("after a failed write the file holds %q, want it unchanged", b)
	}
	entries, more, err := s.List(ctx, dir, 3, false, 100)
	if err != nil || more || len(entries) != 3 || entries[2].Path != "a/b/f.txt" || entries[2].Type != "file" {
		t.Errorf("list = %+v, more %v, %v", entries, more, err)
	}
	if _, err := s.Stat(ctx, filepath.Join(dir, "nope")); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("stat of a missing path: %v, want ErrNotFound", err)
	}
	if err := s.Mkdir(ctx, p); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("mkdir over a file: %v, want ErrConflict", err)
	}
	rc, err := s.TarOut(ctx, filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	tarball, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := s.TarIn(ctx, dst, bytes.NewReader(tarball), 0, 0); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "a", "b", "f.txt")); err != nil || string(b) != "0123456789" {
		t.Errorf("the copied file holds %q, %v", b, err)
	}
	if err := s.Remove(ctx, filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after remove: %v", err)
	}
}

func TestDialAndListen(t *testing.T) {
	s, _ := startAgent(t)
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		b, _ := io.ReadAll(c) // until the half-close
		c.Write(bytes.ToUpper(b))
		c.Close()
	}()
	c, err := s.Dial(ctx, l.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("ping"))
	c.CloseWrite()
	got, err := io.ReadAll(c)
	c.Close()
	if err != nil || string(got) != "PING" {
		t.Errorf("through the dial: %q, %v; want PING", got, err)
	}
	if _, err := s.Dial(ctx, freePort(t)); !errors.Is(err, ErrRefused) {
		t.Errorf("dial to nothing: %v, want ErrRefused", err)
	}

	port := freePort(t)
	stop, err := s.Listen(ctx, port, "test", func(c net.Conn) {
		b, _ := io.ReadAll(c)
		c.Write(append([]byte("echo:"), b...))
		c.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		tc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(tc, "n%d", i)
		tc.(*net.TCPConn).CloseWrite()
		got, _ := io.ReadAll(tc)
		tc.Close()
		if want := fmt.Sprintf("echo:n%d", i); string(got) != want {
			t.Fatalf("through the listener: %q, want %q", got, want)
		}
	}
	stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			break
		}
		tc.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still listens after stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
