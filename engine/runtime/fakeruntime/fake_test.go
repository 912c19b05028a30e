package fakeruntime_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

const img = "fake/img:1"

func opts(name string) runtime.CreateOptions {
	return runtime.CreateOptions{Name: name, Image: img, Labels: map[string]string{"t": "1"}, Workdir: "/work",
		Cmd: []string{"sleep", "infinity"}, MemoryMB: 256, MilliCPUs: 1000, PidsLimit: 64}
}

func started(t *testing.T, rt *fakeruntime.Runtime, name string) string {
	t.Helper()
	ctx := context.Background()
	id, err := rt.Create(ctx, opts(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

func newRT() *fakeruntime.Runtime {
	rt := fakeruntime.New()
	rt.AddImage(img, runtime.Image{Env: []string{"A=1"}}, map[string]string{"/etc/hello": "hi\n"})
	return rt
}

// TestContainerLifecycleAndKinds: the states and events of a container's
// life, and the error kinds the Docker runtime gives.
func TestContainerLifecycleAndKinds(t *testing.T) {
	rt, ctx := newRT(), context.Background()
	evctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errs := rt.Events(evctx, map[string]string{"t": "1"})
	if _, err := rt.Create(ctx, runtime.CreateOptions{Image: "nope", MemoryMB: 1, MilliCPUs: 1000, PidsLimit: 1}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("create from a missing image: %v", err)
	}
	if _, err := rt.Create(ctx, runtime.CreateOptions{Image: img}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("create without limits: %v", err)
	}
	id := started(t, rt, "one")
	if _, err := rt.Create(ctx, opts("one")); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("a second container named one: %v", err)
	}
	if c, err := rt.Inspect(ctx, "one"); err != nil || c.ID != id || c.State != "running" || !c.Init || c.Networks[0] != "none" {
		t.Errorf("inspect by name: %+v, %v", c, err)
	}
	if err := rt.Stop(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"true"}}); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("exec in a stopped container: %v", err)
	}
	if err := rt.Kill(ctx, id); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("kill a stopped container: %v", err)
	}
	if list, _ := rt.List(ctx, map[string]string{"t": "1"}, false); len(list) != 0 {
		t.Errorf("list of running ones shows a stopped one: %+v", list)
	}
	if list, _ := rt.List(ctx, map[string]string{"t": "1"}, true); len(list) != 1 || list[0].State != "exited" {
		t.Errorf("list all: %+v", list)
	}
	if err := rt.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := rt.Remove(ctx, id); err != nil {
		t.Errorf("removing a removed container: %v", err)
	}
	if _, err := rt.Inspect(ctx, id); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("inspect a removed container: %v", err)
	}
	var got []string
	for ev := range events {
		got = append(got, ev.Action)
		if ev.Action == "destroy" {
			cancel()
		}
	}
	if err := <-errs; err != nil {
		t.Errorf("events after cancel: %v", err)
	}
	if want := "create start kill die stop destroy"; strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", strings.Join(got, " "), want)
	}
}

// TestExecHandlersAndKills: a handler's output and exit code come back; a
// cancelled Exec returns without killing its process, which the container's
// removal ends.
func TestExecHandlersAndKills(t *testing.T) {
	rt, ctx := newRT(), context.Background()
	id := started(t, rt, "one")
	hung := make(chan *fakeruntime.Proc, 1)
	rt.SetHandler(func(p *fakeruntime.Proc) int {
		switch p.Script() {
		case "hang":
			hung <- p
			<-p.Done()
			return 137
		case "greet":
			in, _ := io.ReadAll(p.Stdin)
			io.WriteString(p.Stdout, "hello "+string(in)+p.Getenv("A"))
			io.WriteString(p.Stderr, "err")
			return 3
		}
		return p.Builtin()
	})
	var out, errOut bytes.Buffer
	code, err := rt.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", "greet"}, Stdin: strings.NewReader("you"), Stdout: &out, Stderr: &errOut})
	if err != nil || code != 3 || out.String() != "hello you1" || errOut.String() != "err" {
		t.Errorf("exec: %d, %v, %q, %q", code, err, out.String(), errOut.String())
	}

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := rt.Exec(cctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", "hang"}})
		done <- err
	}()
	p := <-hung
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled exec: %v", err)
	}
	if p.Killed() {
		t.Fatal("a cancelled exec killed its process; Docker's does not")
	}

	go func() {
		_, err := rt.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", "hang"}})
		done <- err
	}()
	q := <-hung
	if err := rt.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, sandbox.ErrNotFound) || !q.Killed() || !p.Killed() {
		t.Errorf("exec in a container removed under it: %v (killed %v; the abandoned one %v)", err, q.Killed(), p.Killed())
	}
}

// TestBuiltinShellAndFiles: the tiny shell works on the container's
// files, which the tar copies see.
func TestBuiltinShellAndFiles(t *testing.T) {
	rt, ctx := newRT(), context.Background()
	id := started(t, rt, "one")
	run := func(script string) (string, int) {
		var out bytes.Buffer
		code, err := rt.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", script}, Workdir: "/work", Env: []string{"WHO=me"}, Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		return out.String(), code
	}
	if out, code := run(`mkdir -p d && echo "hi $WHO" > d/f; cat d/f /etc/hello`); out != "hi me\nhi\n" || code != 0 {
		t.Errorf("shell: %q, %d", out, code)
	}
	if out, code := run("cat missing || exit 4"); code != 4 || !strings.Contains(out, "No such file") {
		t.Errorf("|| exit: %q, %d", out, code)
	}
	if _, code := run("frobnicate"); code != 127 {
		t.Errorf("unknown command: exit %d, want 127", code)
	}
	st, err := rt.StatPath(ctx, id, "/work/d")
	if err != nil || !(st.Mode&uint32(1<<31) != 0) {
		t.Errorf("stat of a folder: %+v, %v", st, err)
	}
	if _, err := rt.StatPath(ctx, id, "/work/nope"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("stat of a missing file: %v", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "new.txt", Mode: 0o600, Size: 3, Typeflag: tar.TypeReg, Uid: 1000})
	tw.Write([]byte("abc"))
	tw.Close()
	if err := rt.CopyTo(ctx, id, "/work/d", &buf); err != nil {
		t.Fatal(err)
	}
	if err := rt.CopyTo(ctx, id, "/nowhere", strings.NewReader("")); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("copy into a missing folder: %v", err)
	}
	rc, st, err := rt.CopyFrom(ctx, id, "/work/d")
	if err != nil || st.Name != "d" {
		t.Fatalf("copy from: %+v, %v", st, err)
	}
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if got := strings.Join(names, " "); got != "d/ d/f d/new.txt" {
		t.Errorf("archive of d: %q", got)
	}
	if n, _ := rt.SizeRw(ctx, id); n != int64(len("hi me\n")+3) {
		t.Errorf("SizeRw %d, want the written files' size", n)
	}
}

// TestImages: pulls of unknown images fail as not found; a pullable one
// arrives with an event; tags and removal.
func TestImages(t *testing.T) {
	rt, ctx := newRT(), context.Background()
	evctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, _ := rt.ImageEvents(evctx)
	if err := rt.PullImage(ctx, "nobody/nothing:1", nil); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("pull of an unknown image: %v", err)
	}
	if err := rt.PullImage(ctx, "Bad Ref", nil); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("pull of a malformed reference: %v", err)
	}
	rt.AddPullable("debian", runtime.Image{User: "1000"}, nil)
	var steps int
	if err := rt.PullImage(ctx, "debian:latest", func(runtime.PullProgress) { steps++ }); err != nil || steps == 0 {
		t.Fatalf("pull: %v (%d progress steps)", err, steps)
	}
	if ev := <-events; ev.Action != "pull" || ev.Ref != "debian:latest" {
		t.Errorf("image event %+v", ev)
	}
	if ok, _ := rt.ImageExists(ctx, "docker.io/library/debian"); !ok {
		t.Error("the pulled image is not there by its full name")
	}
	if err := rt.TagImage(ctx, "debian", "mine:2"); err != nil {
		t.Fatal(err)
	}
	if i, err := rt.InspectImage(ctx, "mine:2"); err != nil || i.User != "1000" || len(i.RepoTags) != 2 {
		t.Errorf("inspect the tag: %+v, %v", i, err)
	}
	if err := rt.RemoveImage(ctx, "debian"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := rt.ImageExists(ctx, "mine:2"); !ok {
		t.Error("removing one tag removed the image")
	}
	if _, err := rt.InspectImage(ctx, "debian"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("inspect a removed tag: %v", err)
	}
	if caps := runtime.CapabilitiesOf(rt); caps.Commit || caps.Build || caps.Attach || !caps.Images || !caps.Pause {
		t.Errorf("the fake's capabilities: %+v, want images and pause, but no commit, build or attach", caps)
	}
}

// TestDownAndClosed: a daemon that is down, and a closed client, fail as
// unavailable; the daemon's other clients go on.
func TestDownAndClosed(t *testing.T) {
	rt, ctx := newRT(), context.Background()
	other := rt.Connect()
	evctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errs := rt.Events(evctx, nil)
	rt.SetDown(true)
	if _, err := rt.ServerVersion(ctx); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("version of a daemon that is down: %v", err)
	}
	for range events {
	}
	if err := <-errs; !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("the event stream of a daemon going down: %v", err)
	}
	rt.SetDown(false)
	other.Close()
	if _, err := other.ServerVersion(ctx); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("a closed client: %v", err)
	}
	if _, err := rt.ServerVersion(ctx); err != nil {
		t.Errorf("another client of the daemon after one closed: %v", err)
	}
}

// TestExecStream: a stream's writes reach the process's stdin, its stdout
// comes back on Read, its stderr is kept apart, and CloseWrite lets it end
// with its exit code.
func TestExecStream(t *testing.T) {
	rt, ctx := newRT(), context.Background()
	id := started(t, rt, "one")
	rt.SetHandler(func(p *fakeruntime.Proc) int {
		in, _ := io.ReadAll(p.Stdin)
		io.WriteString(p.Stderr, "relay up")
		io.WriteString(p.Stdout, strings.ToUpper(string(in)))
		return 5
	})
	s, err := rt.ExecStream(ctx, id, "", []string{"relay"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Started(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	s.CloseWrite()
	out, err := io.ReadAll(s)
	if err != nil || string(out) != "PING" {
		t.Errorf("stream output %q, %v", out, err)
	}
	if code, err := s.ExitCode(ctx); code != 5 || err != nil || s.Stderr() != "relay up" {
		t.Errorf("exit %d, %v, stderr %q", code, err, s.Stderr())
	}
	s.Close()
	if err := rt.Stop(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ExecStream(ctx, id, "", []string{"relay"}); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("a stream in a stopped container: %v", err)
	}
}

// TestImportsOnlyTheSeam: the fake imports the standard library,
// engine/runtime, engine/sandbox and the agent's protocol (agent/wire, which
// its agent speaks), nothing else, so any package's tests can use it
// without linking a runtime's SDK.
func TestImportsOnlyTheSeam(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"github.com/sandtray/sandtray/engine/runtime", "github.com/sandtray/sandtray/engine/sandbox", "github.com/sandtray/sandtray/agent/wire"}
	for imp := range strings.Lines(string(out)) {
		imp = strings.TrimSpace(imp)
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && !slices.Contains(allowed, imp) {
			t.Errorf("fakeruntime imports %s; it may import only the standard library and %v", imp, allowed)
		}
	}
}
