//go:build unix

package shim

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/socket"
)

// socketPath returns a socket path in a fresh 0700 directory, which
// socket.Listen insists on.
func socketPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "mcp.sock")
}

// fakeEngine listens on path and runs handle on each connection. Cleanup
// closes the listener and waits for every goroutine it started.
func fakeEngine(t *testing.T, path string, handle func(net.Conn)) {
	t.Helper()
	stop, err := serveFake(path, handle)
	if err != nil {
		t.Fatalf("fake engine: %v", err)
	}
	t.Cleanup(stop)
}

// serveFake is fakeEngine without the test: stop closes the listener and
// waits for the accept loop and every handler.
func serveFake(path string, handle func(net.Conn)) (stop func(), err error) {
	ln, err := socket.Listen(path)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); handle(c) })
		}
	})
	return func() { ln.Close(); wg.Wait() }, nil
}

// echoThenBye echoes everything until the client half-closes, then sends
// "bye\n" and closes: the reply only arrives if the shim half-closed (the
// echo loop ends) and kept reading afterwards.
func echoThenBye(c net.Conn) {
	io.Copy(c, c)
	c.Write([]byte("bye\n"))
}

// lockedBuffer is a bytes.Buffer safe to read while Run writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runShim runs Run with a 10s safety timeout, so a hang fails the test
// instead of stalling the suite.
func runShim(t *testing.T, opts Options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := Run(ctx, opts)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("Run hung until the safety timeout")
	}
	return err
}

func TestPipesBothWaysAndHalfCloses(t *testing.T) {
	path := socketPath(t)
	fakeEngine(t, path, echoThenBye)
	var stdout, stderr lockedBuffer

	err := runShim(t, Options{
		Stdin:      strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"),
		Stdout:     &stdout,
		Stderr:     &stderr,
		SocketPath: path,
		StartEngine: func(context.Context) (<-chan struct{}, error) {
			t.Error("started an engine though one answers")
			return nil, nil
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\nbye\n"
	if got := stdout.String(); got != want {
		t.Errorf("stdout = %q, want %q (echo, then the reply sent after half-close)", got, want)
	}
	if stderr.String() != "" {
		t.Errorf("stderr = %q, want nothing when the engine answers", stderr.String())
	}
}

func TestReturnsWhenEngineClosesAndLeaksNothing(t *testing.T) {
	path := socketPath(t)
	fakeEngine(t, path, func(c net.Conn) { c.Write([]byte("hello\n")) })
	stdinR, stdinW := io.Pipe() // a client that never closes stdin
	before := runtime.NumGoroutine()
	var stdout lockedBuffer

	err := runShim(t, Options{Stdin: stdinR, Stdout: &stdout, SocketPath: path})

	if !errors.Is(err, ErrEngineClosed) {
		t.Errorf("Run = %v, want ErrEngineClosed", err)
	}
	if stdout.String() != "hello\n" {
		t.Errorf("stdout = %q, want hello", stdout.String())
	}
	// The sender is parked in a Read that io.Pipe cannot interrupt; it must
	// exit as soon as that Read returns.
	stdinW.Close()
	waitForGoroutines(t, before)
}

func TestInterruptibleStdinIsWaitedFor(t *testing.T) {
	path := socketPath(t)
	fakeEngine(t, path, func(c net.Conn) { c.Write([]byte("hello\n")) })
	client, stdin := net.Pipe() // supports read deadlines, like a pollable stdin
	defer client.Close()
	before := runtime.NumGoroutine()

	err := runShim(t, Options{Stdin: stdin, Stdout: io.Discard, SocketPath: path})

	if !errors.Is(err, ErrEngineClosed) {
		t.Errorf("Run = %v, want ErrEngineClosed", err)
	}
	waitForGoroutines(t, before) // the sender was interrupted, not abandoned
}

func TestContextCancelEndsRun(t *testing.T) {
	path := socketPath(t)
	fakeEngine(t, path, func(c net.Conn) { io.Copy(io.Discard, c) })
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)

	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Stdin: stdinR, Stdout: io.Discard, SocketPath: path}) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run ignored the cancelled context")
	}
}

func TestStdoutFailureIsReported(t *testing.T) {
	path := socketPath(t)
	fakeEngine(t, path, func(c net.Conn) { c.Write([]byte("hello\n")); io.Copy(io.Discard, c) })
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	broken := errors.New("client went away")

	err := runShim(t, Options{Stdin: stdinR, Stdout: failingWriter{broken}, SocketPath: path})

	if !errors.Is(err, broken) {
		t.Errorf("Run = %v, want the stdout error", err)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// waitForGoroutines fails the test unless the number of goroutines drops to
// want within a few seconds.
func waitForGoroutines(t *testing.T, want int) {
	t.Helper()
	testwait.Baseline{Goroutines: want, Files: 1 << 30}.Settle(t, 5*time.Second, 0)
}
