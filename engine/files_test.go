package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestProjectFlow is the seed servers' example: make a project folder, write
// main.py, run it with cd … && python main.py, read and list the result.
func TestProjectFlow(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	if p, err := te.MakeDirectory(ctx, te.owner, id, "proj/src"); err != nil || p != "/workspace/proj/src" {
		t.Fatalf("make_directory: %q, %v", p, err)
	}
	code := "open('out.txt', 'w').write('written by main')\nprint('hello from main')\n"
	if fc, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "proj/main.py", Data: []byte(code)}); err != nil || fc.Size != int64(len(code)) {
		t.Fatalf("write_file: %+v, %v", fc, err)
	}
	if got := te.command(t, id, "cd proj && python main.py").Stdout; got != "hello from main\n" {
		t.Errorf("run main.py: %q", got)
	}
	fc, err := te.ReadFile(ctx, te.owner, id, "proj/out.txt", 0, 0)
	if err != nil || string(fc.Data) != "written by main" || fc.Truncated {
		t.Errorf("read_file: %+v, %v", fc, err)
	}
	l, err := te.ListFiles(ctx, te.owner, id, "proj", 3, false)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range l.Entries {
		paths = append(paths, e.Path+":"+e.Type)
	}
	want := []string{"main.py:file", "out.txt:file", "src:dir"}
	if !slices.Equal(paths, want) {
		t.Errorf("list_files: %v, want %v", paths, want)
	}
	d, err := te.Diff(ctx, te.owner, id, "proj")
	if err != nil || !slices.Contains(d.Added, "/workspace/proj/main.py") {
		t.Errorf("diff: %+v, %v", d, err)
	}
}

func TestFilesBinaryAndLimits(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "/tmp/deep/er/bin.dat", Data: data, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	fc, err := te.ReadFile(ctx, te.owner, id, "/tmp/deep/er/bin.dat", 1000, 500)
	if err != nil || !bytes.Equal(fc.Data, data[1000:1500]) || fc.Size != 3000 || !fc.Truncated {
		t.Errorf("read with offset/limit: %d bytes size %d truncated %v, %v", len(fc.Data), fc.Size, fc.Truncated, err)
	}
	if got := te.command(t, id, "stat -c %a /tmp/deep/er/bin.dat").Stdout; got != "755\n" {
		t.Errorf("mode: %q", got)
	}
	te.command(t, id, "ln -s /tmp/deep/er/bin.dat link; mkdir -p .hidden; touch .hidden/x")
	if fc, err := te.ReadFile(ctx, te.owner, id, "link", 0, 10); err != nil || !bytes.Equal(fc.Data, data[:10]) {
		t.Errorf("read through a symlink: %v", err)
	}
	_, err = te.ReadFile(ctx, te.owner, id, "/tmp", 0, 0)
	wantKind(t, err, sandbox.ErrInvalid)
	_, err = te.ReadFile(ctx, te.owner, id, "nope.txt", 0, 0)
	wantKind(t, err, sandbox.ErrNotFound)
	_, err = te.ListFiles(ctx, te.owner, id, "nope", 1, false)
	wantKind(t, err, sandbox.ErrNotFound)
	_, err = te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "dir/"})
	wantKind(t, err, sandbox.ErrInvalid)
	hidden, _ := te.ListFiles(ctx, te.owner, id, "", 2, true)
	plain, _ := te.ListFiles(ctx, te.owner, id, "", 2, false)
	if len(hidden.Entries) != 3 || len(plain.Entries) != 1 {
		t.Errorf("all=true lists %d entries (want 3), all=false %d (want 1: just link)", len(hidden.Entries), len(plain.Entries))
	}
}

func TestCopyBetweenHostAndSandbox(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	root := te.cfg.Host.AllowedRoots[0]
	id := te.create(t, sandbox.CreateRequest{}).ID
	src := filepath.Join(root, "in")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("alpha"), 0o644)
	os.WriteFile(filepath.Join(src, "sub", "b.bin"), []byte{0, 1, 2, 255}, 0o600)
	res, err := te.CopyToSandbox(ctx, te.owner, id, src, "data")
	if err != nil || res.Files != 2 || res.Bytes != 9 || res.Path != "/workspace/data" {
		t.Fatalf("copy_to_sandbox: %+v, %v", res, err)
	}
	if got := te.command(t, id, "cat data/a.txt; od -An -tu1 data/sub/b.bin | tr -s ' '").Stdout; got != "alpha 0 1 2 255\n" {
		t.Errorf("copied content: %q", got)
	}
	te.command(t, id, "ln -s /etc/shadow data/evil; mknod data/dev c 1 3 2>/dev/null; true")
	res, err = te.CopyFromSandbox(ctx, te.owner, id, "data", root)
	if err != nil || res.Files != 2 || len(res.Skipped) == 0 {
		t.Fatalf("copy_from_sandbox: %+v, %v", res, err)
	}
	back := filepath.Join(root, "data")
	if b, _ := os.ReadFile(filepath.Join(back, "sub", "b.bin")); !bytes.Equal(b, []byte{0, 1, 2, 255}) {
		t.Errorf("round trip: %v", b)
	}
	if _, err := os.Lstat(filepath.Join(back, "evil")); !os.IsNotExist(err) {
		t.Errorf("a symlink from the sandbox was written to the host (%v)", err)
	}
	_, err = te.CopyFromSandbox(ctx, te.owner, id, "data", back)
	if err != nil {
		t.Errorf("copy into an existing folder: %v", err)
	}
	_, err = te.CopyFromSandbox(ctx, te.owner, id, "data/a.txt", filepath.Join(back, "a.txt"))
	wantKind(t, err, sandbox.ErrConflict)
	if b, _ := os.ReadFile(filepath.Join(back, "a.txt")); string(b) != "alpha" {
		t.Errorf("existing host file changed: %q", b)
	}
	outside := t.TempDir()
	_, err = te.CopyToSandbox(ctx, te.owner, id, outside, "")
	wantKind(t, err, sandbox.ErrForbidden)
	_, err = te.CopyFromSandbox(ctx, te.owner, id, "data", filepath.Join(outside, "x"))
	wantKind(t, err, sandbox.ErrForbidden)
	os.Symlink(outside, filepath.Join(root, "escape"))
	_, err = te.CopyFromSandbox(ctx, te.owner, id, "data", filepath.Join(root, "escape", "x"))
	wantKind(t, err, sandbox.ErrForbidden)
	_, err = te.CopyToSandbox(ctx, te.owner, id, "relative/path", "")
	wantKind(t, err, sandbox.ErrInvalid)
	saved := filepath.Join(t.TempDir(), "picked-by-the-user")
	if res, err := te.SaveFiles(ctx, id, "data/a.txt", saved); err != nil || res.Files != 1 {
		t.Errorf("SaveFiles outside the allowed roots (the person chose it): %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(saved); string(b) != "alpha" {
		t.Errorf("saved file: %q", b)
	}
	_, err = te.SaveFiles(ctx, id, "data/a.txt", saved)
	wantKind(t, err, sandbox.ErrConflict)
	if entries, _ := os.ReadDir(root); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), ".sandtray-copy") }) {
		t.Error("a temporary copy folder was left in the host root")
	}
}

// stall holds, once armed, what the engine sends a sandbox's agent past
// its first MB, until released, as a slow sandbox would: a copy is under
// way when its caller gives up.
type stall struct {
	armed   atomic.Bool
	n       atomic.Int64
	started chan struct{}
	release chan struct{}
}

// stallingSessions is a runtime whose agents' sessions stall.
type stallingSessions struct {
	runtime.Full
	s *stall
}

func (d stallingSessions) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	c, err := d.Full.ExecStream(ctx, id, user, cmd)
	if err != nil {
		return nil, err
	}
	return stallingConn{c, d.s}, nil
}

type stallingConn struct {
	runtime.ExecConn
	s *stall
}

func (c stallingConn) Write(p []byte) (int, error) {
	if c.s.armed.Load() && c.s.n.Add(int64(len(p))) > 1<<20 {
		select {
		case c.s.started <- struct{}{}:
		default:
		}
		<-c.s.release
	}
	return c.ExecConn.Write(p)
}

// TestCancelledCopyLeavesNothing: a copy_to_sandbox whose caller gives up
// midway (the client cancels the request) stops, and leaves neither a
// half-written destination in the sandbox nor a container of its own.
func TestCancelledCopyLeavesNothing(t *testing.T) {
	st := &stall{started: make(chan struct{}, 1), release: make(chan struct{})}
	te := newTestEngineNoLink(t, func(d runtime.Full) runtime.Full { return stallingSessions{d, st} })
	te.attachFirst = false // the session is an exec, which stalls
	root := te.cfg.Host.AllowedRoots[0]
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "true") // the session, before the stall is armed
	src := filepath.Join(root, "big")
	os.MkdirAll(src, 0o755)
	for i := range 4 {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("part%d", i)), bytes.Repeat([]byte{byte(i)}, 1<<20), 0o644)
	}
	before := containersOf(t, te)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	st.armed.Store(true)
	go func() {
		_, err := te.CopyToSandbox(ctx, te.owner, id, src, "big")
		done <- err
	}()
	select {
	case <-st.started:
	case err := <-done:
		t.Fatalf("the copy ended before it stalled: %v", err)
	}
	cancel()
	st.armed.Store(false)
	close(st.release)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled copy returned %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the copy did not stop when its ctx was cancelled")
	}
	if out := te.command(t, id, "ls -d /workspace/big 2>&1; true").Stdout; !strings.Contains(out, "No such file") {
		t.Errorf("the cancelled copy left its destination behind: %q", out)
	}
	if after := containersOf(t, te); after != before {
		t.Errorf("%d containers after the cancelled copy, %d before", after, before)
	}
}

// containersOf counts the containers carrying te's labels.
func containersOf(t *testing.T, te *testEngine) int {
	t.Helper()
	list, err := te.docker.List(context.Background(), te.labels, true)
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	return len(list)
}
