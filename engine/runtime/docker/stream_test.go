package docker_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestExecStream(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)

	t.Run("half-close: stdin's end reaches the process, stdout keeps flowing", func(t *testing.T) {
		s, err := c.ExecStream(ctx, id, "", []string{"sh", "-c", "cat; echo done; echo oops >&2"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		payload := make([]byte, 3<<20)
		rand.Read(payload)
		go func() {
			_, _ = s.Write(payload)
			_ = s.CloseWrite()
		}()
		got, err := io.ReadAll(s)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if want := append(payload, "done\n"...); !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes, want %d (the payload then done)", len(got), len(want))
		}
		if code, err := s.ExitCode(ctx); err != nil || code != 0 {
			t.Errorf("ExitCode = %d, %v; want 0", code, err)
		}
		if !strings.Contains(s.Stderr(), "oops") {
			t.Errorf("Stderr = %q, want the process's stderr", s.Stderr())
		}
	})

	t.Run("the process's exit ends the stream while stdin is still open", func(t *testing.T) {
		// Docker ends an exec's output only when the process exits, not when
		// it closes stdout: the relay helpers exit when their server's side ends.
		s, err := c.ExecStream(ctx, id, "", []string{"sh", "-c", "printf x"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		done := make(chan []byte)
		go func() { b, _ := io.ReadAll(s); done <- b }()
		select {
		case got := <-done:
			if string(got) != "x" {
				t.Errorf("read %q, want x", got)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no EOF after the process exited")
		}
	})

	t.Run("a stopped container is a conflict", func(t *testing.T) {
		if err := c.Stop(ctx, id, time.Second); err != nil {
			t.Fatal(err)
		}
		_, err := c.ExecStream(ctx, id, "", []string{"true"})
		if !errors.Is(err, sandbox.ErrConflict) {
			t.Errorf("ExecStream in a stopped container: %v, want ErrConflict", err)
		}
	})
}
