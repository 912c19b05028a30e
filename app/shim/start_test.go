//go:build unix

package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sandtray/sandtray/serve/socket"
)

// fakeEngineEnv makes the test binary act as a detached engine (see TestMain).
const fakeEngineEnv = "SANDTRAY_SHIM_TEST_ENGINE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEngineEnv) == "1" {
		os.Exit(runFakeEngine())
	}
	os.Exit(m.Run())
}

// runFakeEngine reports how it was started on stdout (the engine log), then
// serves one echo connection on $SANDTRAY_SOCKET, giving up after 20s.
func runFakeEngine() int {
	fmt.Printf("pid=%d pgid=%d args=%q\n", os.Getpid(), syscall.Getpgrp(), os.Args[1:])
	ln, err := socket.Listen(os.Getenv(socket.EnvSocket))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer ln.Close()
	time.AfterFunc(20*time.Second, func() { ln.Close() })
	c, err := ln.Accept()
	if err != nil {
		return 1
	}
	defer c.Close()
	io.Copy(c, c)
	return 0
}

func TestAutoStart(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("stale socket %v", stale), func(t *testing.T) {
			path := socketPath(t)
			if stale {
				leaveDeadSocket(t, path)
			}
			var starts atomic.Int32
			stopped := make(chan func(), 1)
			start := func(context.Context) (<-chan struct{}, error) {
				starts.Add(1)
				time.AfterFunc(300*time.Millisecond, func() { // an engine that takes a while
					stop, err := serveFake(path, echoThenBye)
					if err != nil {
						t.Errorf("fake engine: %v", err)
						stop = func() {}
					}
					stopped <- stop
				})
				return nil, nil
			}
			var stdout, stderr lockedBuffer
			err := runShim(t, Options{Stdin: strings.NewReader("ping\n"), Stdout: &stdout, Stderr: &stderr,
				SocketPath: path, StartEngine: start})
			if starts.Load() > 0 {
				(<-stopped)()
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := stdout.String(); got != "ping\nbye\n" {
				t.Errorf("stdout = %q, want only the engine's bytes %q", got, "ping\nbye\n")
			}
			if n := starts.Load(); n != 1 {
				t.Errorf("StartEngine called %d times, want 1", n)
			}
			if !strings.Contains(stderr.String(), "starting one") {
				t.Errorf("stderr = %q, want a note that the engine is being started", stderr.String())
			}
		})
	}
}

// leaveDeadSocket leaves a socket file nobody listens on, like a crashed engine.
func leaveDeadSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

func TestEngineNeverAnswers(t *testing.T) {
	path := socketPath(t)
	logPath := "/home/u/.local/state/sandtray/engine.log"
	var stdout lockedBuffer
	began := time.Now()

	err := runShim(t, Options{Stdin: strings.NewReader("ping\n"), Stdout: &stdout, SocketPath: path,
		StartEngine: func(context.Context) (<-chan struct{}, error) { return nil, nil }, LogPath: logPath,
		WaitTimeout: 300 * time.Millisecond})

	if err == nil {
		t.Fatal("Run succeeded with no engine")
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("gave up after %v, want about the 300ms WaitTimeout", took)
	}
	for _, want := range []string{path, "300ms", logPath, "sandtray serve"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if stdout.String() != "" {
		t.Errorf("stdout = %q, want nothing: it is the client's protocol stream", stdout.String())
	}
}

// TestEngineEndedSaysWhy: when the engine the shim started exits without
// answering, the shim gives up soon after (not at WaitTimeout), and its
// error (which the client keeps as the server's log) carries the reason
// the engine printed, not an earlier start's.
func TestEngineEndedSaysWhy(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "engine.log")
	why := "sandtray: start engine: another Sandtray engine is running on this state dir (process 4242): /home/u/.local/state/sandtray"
	for _, tc := range []struct {
		log, want, not string
	}{
		{"--- 1 sandtray-mcp starts\nsandtray: start engine: docker is old\n--- 2 sandtray-mcp starts\ntime=x level=INFO msg=\"docker endpoint chosen\"\n" + why + "\n",
			"exited without answering on %s. The engine said: start engine: another Sandtray engine is running on this state dir (process 4242)", "docker is old"},
		{"--- 1 sandtray-mcp starts\nsandtray: start engine: docker is old\n--- 2 sandtray-mcp starts\ntime=x level=INFO msg=killed\n",
			"exited without answering on %s. See its log " + logPath, "docker is old"},
	} {
		path := socketPath(t)
		start := func(context.Context) (<-chan struct{}, error) {
			ended := make(chan struct{})
			close(ended)
			return ended, os.WriteFile(logPath, []byte(tc.log), 0o600)
		}
		began := time.Now()
		err := runShim(t, Options{Stdin: strings.NewReader(""), Stdout: io.Discard, SocketPath: path,
			StartEngine: start, LogPath: logPath, WaitTimeout: time.Minute})
		if want := fmt.Sprintf(tc.want, path); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("with the log\n%s\nRun = %v; want it to say %q, not %q", tc.log, err, want, tc.not)
		}
		if took := time.Since(began); took > endedGrace+3*time.Second {
			t.Errorf("gave up %v after the engine exited, want about endedGrace (%v)", took, endedGrace)
		}
	}
}

// TestTwinStartsShareTheWinner: two shims starting an engine at once, the
// one this shim started exits (the other holds the socket), and the other
// answers a moment later: the shim connects to it.
func TestTwinStartsShareTheWinner(t *testing.T) {
	path := socketPath(t)
	stopped := make(chan func(), 1)
	start := func(context.Context) (<-chan struct{}, error) {
		time.AfterFunc(300*time.Millisecond, func() {
			stop, err := serveFake(path, echoThenBye)
			if err != nil {
				t.Errorf("fake engine: %v", err)
				stop = func() {}
			}
			stopped <- stop
		})
		ended := make(chan struct{})
		close(ended) // ours lost the race at once
		return ended, nil
	}
	var stdout lockedBuffer
	err := runShim(t, Options{Stdin: strings.NewReader("ping\n"), Stdout: &stdout, SocketPath: path, StartEngine: start})
	(<-stopped)()
	if err != nil {
		t.Fatalf("Run = %v; want the twin engine's session", err)
	}
	if !strings.Contains(stdout.String(), "ping") {
		t.Errorf("stdout = %q, want the twin engine's echo", stdout.String())
	}
}

func TestEngineCannotStart(t *testing.T) {
	missing := errors.New(`no "sandtray" next to /opt/sandtray-mcp or in PATH`)
	err := runShim(t, Options{Stdin: strings.NewReader(""), Stdout: io.Discard, SocketPath: socketPath(t),
		StartEngine: func(context.Context) (<-chan struct{}, error) { return nil, missing }})
	if !errors.Is(err, missing) {
		t.Fatalf("Run = %v, want it to wrap the start error", err)
	}
	for _, want := range []string{"Install Sandtray", "sandtray serve"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestDetachedStart runs the built-in starter for real, with this test binary
// as the engine: it must run `serve` (the engine without a window) even on a
// desktop with a display (before, the shim started the tray app there: an
// assistant opened Sandtray's window), in its own session, with its output
// in the log and the socket path passed on.
func TestDetachedStart(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeEngineEnv, "1")
	t.Setenv("DISPLAY", ":0")
	t.Setenv("WAYLAND_DISPLAY", "wayland-0")
	path := socketPath(t)
	logPath := filepath.Join(t.TempDir(), "state", "sandtray", "engine.log")
	var stdout lockedBuffer

	err = runShim(t, Options{Stdin: strings.NewReader("ping\n"), Stdout: &stdout, SocketPath: path,
		EnginePath: self, LogPath: logPath})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if stdout.String() != "ping\n" {
		t.Errorf("stdout = %q, want the echo", stdout.String())
	}
	var pid, pgid int
	var args string
	b, _ := os.ReadFile(logPath)
	line := strings.SplitN(string(b), "\n", 3)[1]
	if _, err := fmt.Sscanf(line, "pid=%d pgid=%d args=%s", &pid, &pgid, &args); err != nil {
		t.Fatalf("engine log %q: %v", b, err)
	}
	if args != `["serve"]` {
		t.Errorf("engine args = %s on a desktop, want [\"serve\"]: the shim never opens a window", args)
	}
	if pid != pgid {
		t.Errorf("engine pgid = %d, want its own pid %d (a new session)", pgid, pid)
	}
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("engine log mode: %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestFindEngine(t *testing.T) {
	bin := t.TempDir()
	shimPath := filepath.Join(bin, "sandtray-mcp")
	enginePath := filepath.Join(bin, "sandtray")
	linkDir := t.TempDir()
	link := filepath.Join(linkDir, "sandtray-mcp")
	for _, p := range []string{shimPath, enginePath} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(shimPath, link); err != nil {
		t.Fatal(err)
	}
	inPath := func(string) (string, error) { return "/usr/bin/sandtray", nil }
	notInPath := func(string) (string, error) { return "", errors.New("not found") }

	tests := []struct {
		name, explicit, self string
		look                 func(string) (string, error)
		want                 string
	}{
		{"explicit wins", "/x/sandtray", shimPath, inPath, "/x/sandtray"},
		{"next to the shim beats PATH", "", shimPath, inPath, enginePath},
		{"next to a symlinked shim's target", "", link, notInPath, enginePath},
		{"PATH when not next to the shim", "", filepath.Join(linkDir, "other"), inPath, "/usr/bin/sandtray"},
		{"nowhere", "", filepath.Join(linkDir, "other"), notInPath, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findEngine(tt.explicit, tt.self, tt.look)
			if got != tt.want || (err != nil) != (tt.want == "") {
				t.Errorf("findEngine = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestStateDir(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		goos, xdgState string
		home           func() (string, error)
		want           string
	}{
		{"linux", "", home, "/home/u/.local/state"},
		{"linux", "/state", home, "/state"},
		{"linux", "relative", home, "/home/u/.local/state"},
		{"darwin", "", home, "/home/u/Library/Application Support"},
		{"windows", "", home, "/home/u/AppData/Local"},
		{"windows", "/local-app-data", home, "/local-app-data"}, // XDG_STATE_HOME, then LOCALAPPDATA
		{"linux", "", noHome, ""},
	}
	for _, tt := range tests {
		env := func(string) string { return tt.xdgState }
		if got := stateDir(tt.goos, env, tt.home); got != tt.want {
			t.Errorf("stateDir(%s, XDG_STATE_HOME=%q) = %q, want %q", tt.goos, tt.xdgState, got, tt.want)
		}
	}
}

// TestAnEngineThatCannotStartSaysWhyOnInitialize: when the engine the shim
// started exits without answering (Docker down), the client's initialize
// gets a JSON-RPC error with the engine's reason, and its notifications no
// answer; before, the shim ended with the reason on stderr alone, which
// clients hide.
func TestAnEngineThatCannotStartSaysWhyOnInitialize(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "engine.log")
	start := func(context.Context) (<-chan struct{}, error) {
		ended := make(chan struct{})
		close(ended)
		return ended, os.WriteFile(logPath, []byte("--- 1 sandtray-mcp starts\nsandtray: start engine: cannot reach the Docker daemon at unix:///var/run/docker.sock\n"), 0o600)
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":"two","method":"tools/list"}` + "\n"
	var stdout lockedBuffer
	err := runShim(t, Options{Stdin: strings.NewReader(in), Stdout: &stdout, SocketPath: socketPath(t), StartEngine: start, LogPath: logPath})
	if err == nil {
		t.Fatal("Run = nil; want the start's error")
	}
	type answer struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
		}
	}
	var answers []answer
	for line := range strings.Lines(stdout.String()) {
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("stdout %q: %v", stdout.String(), err)
		}
		answers = append(answers, a)
	}
	if len(answers) != 2 || string(answers[0].ID) != "1" || string(answers[1].ID) != `"two"` {
		t.Fatalf("stdout %q; want an error for each of the 2 requests", stdout.String())
	}
	for _, want := range []string{"cannot reach the Docker daemon", "Ask the user to open the Sandtray app"} {
		if !strings.Contains(answers[0].Error.Message, want) || answers[0].Error.Code != unavailableCode {
			t.Errorf("initialize's error %+v; want it to say %q", answers[0].Error, want)
		}
	}
}
