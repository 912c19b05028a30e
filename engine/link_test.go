package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestSessionsTakeTheLink: on the engine's own host, a new sandbox's agent
// dials its link, and commands, files and code pay no exec at all; the
// link is the sandbox's own folder, read-only inside, and goes with it.
func TestSessionsTakeTheLink(t *testing.T) {
	var execs atomic.Int32
	te := newTestEngineOn(t, func(d runtime.Full) runtime.Full { return execCounter{d, &execs} })
	if !te.execs.Linking() {
		t.Skip("the daemon is not on this host: no links")
	}
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "true")
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "a.txt", Data: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
	if r := te.code(t, id, sandbox.CodeRequest{Code: "print(open('a.txt').read())"}); r.Stdout != "hi\n" {
		t.Errorf("execute_code: %+v", r)
	}
	if n := execs.Load(); n != 0 {
		t.Errorf("%d execs for a command, a file and code in a linked sandbox, want none", n)
	}
	c, err := te.docker.Inspect(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(te.cfg.StateDir, "link", c.Labels[sandbox.LabelLink])
	if _, err := os.Stat(filepath.Join(folder, "s")); err != nil {
		t.Fatalf("the sandbox's link socket: %v", err)
	}
	if r := te.command(t, id, "touch "+runtime.LinkDir+"/x 2>&1; rm -f "+runtime.LinkSocket+" 2>&1; ls "+runtime.LinkDir); !strings.Contains(r.Stdout, "Read-only") || !strings.HasSuffix(r.Stdout, "s\n") {
		t.Errorf("the link folder is not read-only inside the sandbox: %q", r.Stdout)
	}
	if err := te.Delete(ctx, te.owner, id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("the deleted sandbox's link folder stays: %v", err)
	}
}

// TestTheLinkComesBack: a persistent sandbox's agent dials the link again
// for the next engine (which asks it to), and for the same engine after
// the sandbox's stop and start: neither pays an exec.
func TestTheLinkComesBack(t *testing.T) {
	var execs atomic.Int32
	count := func(d runtime.Full) runtime.Full { return execCounter{d, &execs} }
	te := newTestEngineOn(t, count)
	if !te.execs.Linking() {
		t.Skip("the daemon is not on this host: no links")
	}
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	te.command(t, id, "echo kept > /workspace/f")
	te.stopLoops()
	e2, err := newEngine(ctx, te.cfg, count(te.docker), Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e2.stopLoops)
	execs.Store(0)
	if r, err := e2.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "cat /workspace/f"}); err != nil || r.Result.Stdout != "kept\n" {
		t.Fatalf("after the engine's restart: %+v, %v", r, err)
	}
	if _, err := e2.Stop(ctx, te.owner, id); err != nil {
		t.Fatal(err)
	}
	if r, err := e2.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "cat /workspace/f"}); err != nil || r.Result.Stdout != "kept\n" {
		t.Fatalf("after the sandbox's stop: %+v, %v", r, err)
	}
	if n := execs.Load(); n != 0 {
		t.Errorf("%d execs after the engine's restart and the sandbox's, want none: the link came back", n)
	}
	if err := e2.Delete(ctx, te.owner, id); err != nil {
		t.Fatal(err)
	}
}

// TestImpostorsOnTheLink: a process of the sandbox (the model's, as root)
// that dials the link while the engine has no session with the agent is
// refused, and the agent's own link comes back for the next call.
func TestImpostorsOnTheLink(t *testing.T) {
	te := newTestEngine(t)
	if !te.execs.Linking() {
		t.Skip("the daemon is not on this host: no links")
	}
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "true")
	te.execs.Forget(id) // the engine's session ends: the link waits for a dial
	impostor := `import socket
s = socket.socket(socket.AF_UNIX)
s.connect("` + runtime.LinkSocket + `")
s.settimeout(5)
try:
    print("served" if s.recv(1) else "refused")
except socket.timeout:
    print("held")`
	var out strings.Builder
	// A process of the sandbox's own, started from outside the session.
	code, err := te.execs.Full.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"python3", "-c", impostor}, User: "root", Stdout: &out, Stderr: &out})
	if err != nil || code != 0 || out.String() != "refused\n" {
		t.Errorf("an impostor on the link: %q (exit %d, %v), want refused", out.String(), code, err)
	}
	if r := te.command(t, id, "echo back"); r.Stdout != "back\n" {
		t.Errorf("after the impostor: %+v", r)
	}
}

// TestTheLinksOfRemovedSandboxesAreSwept: a sandbox removed while no engine
// ran (docker rm) leaves its link folder, which the next engine removes;
// a live sandbox's stays.
func TestTheLinksOfRemovedSandboxesAreSwept(t *testing.T) {
	te := newTestEngine(t)
	if !te.execs.Linking() {
		t.Skip("the daemon is not on this host: no links")
	}
	ctx := context.Background()
	gone := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	kept := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	folder := func(id string) string {
		c, err := te.docker.Inspect(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(te.cfg.StateDir, "link", c.Labels[sandbox.LabelLink])
	}
	goneDir, keptDir := folder(gone), folder(kept)
	te.stopLoops()
	if err := te.docker.Remove(ctx, gone); err != nil {
		t.Fatal(err)
	}
	e2, err := newEngine(ctx, te.cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e2.stopLoops)
	if _, err := os.Stat(goneDir); !os.IsNotExist(err) {
		t.Errorf("the removed sandbox's link folder stays: %v", err)
	}
	if _, err := os.Stat(keptDir); err != nil {
		t.Errorf("the live sandbox's link folder: %v", err)
	}
	if err := e2.Delete(ctx, te.owner, kept); err != nil {
		t.Fatal(err)
	}
}
