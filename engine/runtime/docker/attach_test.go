package docker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/dockertest"
)

// TestAttachBeforeStart: what is written to an attached container's stdin
// before its start reaches its main process, its output comes back on the
// attachment, split as exec splits it, and the end of what is sent closes
// the process's stdin (StdinOnce). The container has no docker-init and no
// log.
func TestAttachBeforeStart(t *testing.T) {
	c, ctx := dockertest.Client(t), testCtx(t)
	o := createOptions(t)
	o.Attached = true
	o.Cmd = []string{"/bin/sh", "-c", `read line; echo "got $line"; echo oops >&2; cat >/dev/null; echo eof; exec sleep 60`}
	id, err := c.Create(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	att, err := c.Attach(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW := io.Pipe()
	stdout := &watched{want: "got hello\n", seen: make(chan struct{})}
	var stderr bytes.Buffer
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- att.Stream(streamCtx, stdinR, stdout, &stderr) }()
	go func() { _, _ = stdinW.Write([]byte("hello\n")) }()
	waitFor(t, stdout.seen, "the main process's answer to what was written before its start")
	stdout.arm("got hello\neof\n")
	_ = stdinW.Close()
	waitFor(t, stdout.seen, "the main process to read EOF once the attachment's input ended")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Stream after its context was cancelled: %v", err)
	}
	if stderr.String() != "oops\n" {
		t.Errorf("stderr %q, want %q", stderr.String(), "oops\n")
	}
	raw, err := c.InspectRaw(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HostConfig struct {
			Init      *bool
			LogConfig struct{ Type string }
		}
		Config struct{ OpenStdin, StdinOnce bool }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.HostConfig.Init == nil || *doc.HostConfig.Init || doc.HostConfig.LogConfig.Type != "none" || !doc.Config.OpenStdin || !doc.Config.StdinOnce {
		t.Errorf("an attached container: want no init, log driver none, stdin open once; got %s", raw)
	}
}

// watched is a writer that closes seen once what it holds is want.
type watched struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.buf.String() == w.want {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watched) arm(want string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want, w.seen = want, make(chan struct{})
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
