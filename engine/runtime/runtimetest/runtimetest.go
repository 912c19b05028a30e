// Package runtimetest is the conformance suite of engine/runtime: what
// every container runtime must do for the engine, checked the same way
// whatever the runtime is. A runtime's test calls Run once:
//
//	func TestConformance(t *testing.T) {
//		runtimetest.Run(t, func(t *testing.T) runtime.Runtime { return connect(t) },
//			runtimetest.Options{Image: "…", Labels: …})
//	}
//
// It exercises the core seam (create, start, inspect, list, exec with exit
// codes, output and stdin, streams, copies both ways, stats, events, stop
// and remove, and the not-found and conflict errors) and, for each optional
// part the runtime has (runtime.CapabilitiesOf), that part; it skips those
// it lacks. The fake (engine/runtime/fakeruntime) and Docker
// (engine/runtime/docker, on a real daemon) run it.
//
// It imports the standard library, engine/runtime and engine/sandbox only,
// so a runtime's tests link no other runtime.
package runtimetest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Options is what the suite needs of the runtime's environment.
type Options struct {
	// Image is an image the runtime has (or fetches at create) with a
	// POSIX shell at /bin/sh and echo, cat, mkdir and sleep.
	Image string
	// Labels are put on every container the suite makes, besides its own:
	// the caller's test support may remove what they mark if a test dies.
	Labels map[string]string
	// ImageRepo, when set, is a repository the suite may commit images to
	// (a runtime with Committer and Imager); the caller removes what it
	// holds. Empty skips the commit.
	ImageRepo string
	// Timeout bounds each wait (an event, a stream); 0 means 30 s.
	Timeout time.Duration
}

// Run runs the suite on runtimes newRuntime makes, one per subtest.
func Run(t *testing.T, newRuntime func(t *testing.T) runtime.Runtime, o Options) {
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	s := &suite{o: o, newRuntime: newRuntime}
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *fixture)
	}{
		{"Lifecycle", s.lifecycle},
		{"Exec", s.exec},
		{"ExecStream", s.execStream},
		{"Copy", s.copy},
		{"Stats", s.stats},
		{"Events", s.events},
		{"Errors", s.errors},
		{"Pause", s.pause},
		{"Rename", s.rename},
		{"Commit", s.commit},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, s.fixture(t))
		})
	}
}

type suite struct {
	o          Options
	newRuntime func(t *testing.T) runtime.Runtime
}

// fixture is one subtest's runtime, its labels and its context.
type fixture struct {
	s      *suite
	rt     runtime.Runtime
	caps   runtime.Capabilities
	labels map[string]string
	ctx    context.Context
}

func (s *suite) fixture(t *testing.T) *fixture {
	t.Helper()
	rt := s.newRuntime(t)
	labels := map[string]string{}
	for k, v := range s.o.Labels {
		labels[k] = v
	}
	labels["sandtray.runtimetest"] = t.Name() + "/" + sandbox.RandomHex(4)
	ctx, cancel := context.WithTimeout(context.Background(), 4*s.o.Timeout)
	t.Cleanup(cancel)
	f := &fixture{s: s, rt: rt, caps: runtime.CapabilitiesOf(rt), labels: labels, ctx: ctx}
	t.Cleanup(func() { // every container the subtest made, whatever happened to it
		cctx, ccancel := context.WithTimeout(context.Background(), s.o.Timeout)
		defer ccancel()
		list, err := rt.List(cctx, labels, true)
		if err != nil {
			t.Errorf("list the suite's containers to remove them: %v", err)
		}
		for _, c := range list {
			if err := rt.Remove(cctx, c.ID); err != nil {
				t.Errorf("remove container %s: %v", c.ID, err)
			}
		}
	})
	return f
}

// options are a container's create options: the suite's labels, small
// limits, no network, a main process that lasts.
func (f *fixture) options(name string) runtime.CreateOptions {
	return runtime.CreateOptions{Name: name, Image: f.s.o.Image, Labels: f.labels,
		Cmd: []string{"sleep", "infinity"}, Network: sandbox.NetworkNone,
		MemoryMB: 256, MilliCPUs: 1000, PidsLimit: 64}
}

// running creates and starts a container.
func (f *fixture) running(t *testing.T) string {
	t.Helper()
	id, err := f.rt.Create(f.ctx, f.options(""))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := f.rt.Start(f.ctx, id); err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	return id
}

// sh runs script with /bin/sh -c and returns its exit code, stdout and stderr.
func (f *fixture) sh(t *testing.T, id, script string, stdin io.Reader) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code, err := f.rt.Exec(f.ctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", script}, Stdin: stdin, Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return code, out.String(), errOut.String()
}

func (s *suite) lifecycle(t *testing.T, f *fixture) {
	name := "sandtray-rtt-" + sandbox.RandomHex(6)
	id, err := f.rt.Create(f.ctx, f.options(name))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	c, err := f.rt.Inspect(f.ctx, id)
	if err != nil {
		t.Fatalf("inspect a created container: %v", err)
	}
	if c.ID != id || c.Name != name || c.State != runtime.StateCreated || c.Labels["sandtray.runtimetest"] != f.labels["sandtray.runtimetest"] {
		t.Errorf("a created container inspects as %+v, want id %s, name %s, state created and the suite's labels", c, id, name)
	}
	if byName, err := f.rt.Inspect(f.ctx, name); err != nil || byName.ID != id {
		t.Errorf("inspect by name: %+v, %v", byName, err)
	}
	if list, err := f.rt.List(f.ctx, f.labels, false); err != nil || len(list) != 0 {
		t.Errorf("List(running only) before the start: %v, %v; want none", list, err)
	}
	if err := f.rt.Start(f.ctx, id); err != nil {
		t.Fatalf("start: %v", err)
	}
	if c, err = f.rt.Inspect(f.ctx, id); err != nil || c.State != runtime.StateRunning || c.StartedAt.IsZero() {
		t.Errorf("a started container: %+v, %v; want running, with its start time", c, err)
	}
	list, err := f.rt.List(f.ctx, f.labels, false)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].State != runtime.StateRunning {
		t.Errorf("List(labels) of one running container: %+v, %v", list, err)
	}
	other := map[string]string{"sandtray.runtimetest": "none-" + sandbox.RandomHex(4)}
	if list, err := f.rt.List(f.ctx, other, true); err != nil || len(list) != 0 {
		t.Errorf("List of labels no container has: %+v, %v", list, err)
	}
	restarts := s.end(t, f, id)
	if c, err = f.rt.Inspect(f.ctx, id); err != nil || c.State != runtime.StateExited {
		t.Errorf("a stopped container: %+v, %v; want exited", c, err)
	}
	if list, err := f.rt.List(f.ctx, f.labels, true); err != nil || len(list) != 1 {
		t.Errorf("List(all) of a stopped container: %+v, %v", list, err)
	}
	if err := f.rt.Start(f.ctx, id); restarts && err != nil {
		t.Fatalf("start a stopped container again: %v", err)
	} else if !restarts && !errors.Is(err, sandbox.ErrUnsupported) {
		t.Errorf("start again a container of a runtime that cannot stop one: %v, want sandbox.ErrUnsupported", err)
	}
	if err := f.rt.Remove(f.ctx, id); err != nil { // running: Remove ends it
		t.Fatalf("remove a running container: %v", err)
	}
	if _, err := f.rt.Inspect(f.ctx, id); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("inspect a removed container: %v, want sandbox.ErrNotFound", err)
	}
	if err := f.rt.Remove(f.ctx, id); err != nil {
		t.Errorf("remove a container already gone: %v, want nil (Remove is idempotent)", err)
	}
}

func (s *suite) exec(t *testing.T, f *fixture) {
	id := f.running(t)
	code, out, errOut := f.sh(t, id, "echo out; echo err 1>&2; exit 3", nil)
	if code != 3 || out != "out\n" || errOut != "err\n" {
		t.Errorf("exec: code %d, stdout %q, stderr %q; want 3, %q, %q", code, out, errOut, "out\n", "err\n")
	}
	if code, out, _ := f.sh(t, id, "cat", strings.NewReader("from stdin\n")); code != 0 || out != "from stdin\n" {
		t.Errorf("exec with stdin: code %d, stdout %q", code, out)
	}
	if code, _, _ := f.sh(t, id, "no-such-command-rtt", nil); code != 127 {
		t.Errorf("a command not found exits %d, want 127", code)
	}
	var env bytes.Buffer
	code, err := f.rt.Exec(f.ctx, id, runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", "echo $RTT_VALUE"}, Env: []string{"RTT_VALUE=seen"}, Stdout: &env})
	if err != nil || code != 0 || env.String() != "seen\n" {
		t.Errorf("exec with env: %d, %v, stdout %q", code, err, env.String())
	}
}

func (s *suite) execStream(t *testing.T, f *fixture) {
	id := f.running(t)
	conn, err := f.rt.ExecStream(f.ctx, id, "", []string{"cat"})
	if err != nil {
		t.Fatalf("exec stream: %v", err)
	}
	defer conn.Close()
	if err := conn.Started(f.ctx); err != nil {
		t.Fatalf("the stream's process did not start: %v", err)
	}
	if _, err := conn.Write([]byte("ping over the stream\n")); err != nil {
		t.Fatalf("write to the stream: %v", err)
	}
	if err := conn.CloseWrite(); err != nil {
		t.Fatalf("close the stream's stdin: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(conn)
		got <- b
	}()
	select {
	case b := <-got:
		if string(b) != "ping over the stream\n" {
			t.Errorf("the stream read back %q", b)
		}
	case <-time.After(s.o.Timeout):
		t.Fatal("the stream's stdout did not end after its stdin closed")
	}
	ctx, cancel := context.WithTimeout(f.ctx, s.o.Timeout)
	defer cancel()
	if code, err := conn.ExitCode(ctx); err != nil || code != 0 {
		t.Errorf("the stream's exit: %d, %v", code, err)
	}
}

func (s *suite) copy(t *testing.T, f *fixture) {
	id := f.running(t)
	if code, _, errOut := f.sh(t, id, "mkdir -p /tmp/rtt", nil); code != 0 {
		t.Fatalf("mkdir: %d %s", code, errOut)
	}
	body := "copied in\n"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "hello.txt", Mode: 0o644, Size: int64(len(body)), ModTime: time.Now(), Typeflag: tar.TypeReg})
	tw.Write([]byte(body))
	tw.Close()
	if err := f.rt.CopyTo(f.ctx, id, "/tmp/rtt", &buf); err != nil {
		t.Fatalf("copy to: %v", err)
	}
	if code, out, _ := f.sh(t, id, "cat /tmp/rtt/hello.txt", nil); code != 0 || out != body {
		t.Errorf("the copied file reads %q (exit %d)", out, code)
	}
	st, err := f.rt.StatPath(f.ctx, id, "/tmp/rtt/hello.txt")
	if err != nil || st.Name != "hello.txt" || st.Size != int64(len(body)) {
		t.Errorf("stat path: %+v, %v", st, err)
	}
	f.sh(t, id, "echo made inside > /tmp/rtt/made.txt", nil)
	rc, st, err := f.rt.CopyFrom(f.ctx, id, "/tmp/rtt/made.txt")
	if err != nil {
		t.Fatalf("copy from: %v", err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil || h.Name != "made.txt" || st.Name != "made.txt" {
		t.Fatalf("copy from's first entry: %+v, %v (stat %+v); want made.txt", h, err, st)
	}
	if b, _ := io.ReadAll(tr); string(b) != "made inside\n" {
		t.Errorf("copied out %q", b)
	}
	if _, err := f.rt.StatPath(f.ctx, id, "/tmp/rtt/none"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("stat of a missing path: %v, want sandbox.ErrNotFound", err)
	}
	if _, _, err := f.rt.CopyFrom(f.ctx, id, "/tmp/rtt/none"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("copy from a missing path: %v, want sandbox.ErrNotFound", err)
	}
}

func (s *suite) stats(t *testing.T, f *fixture) {
	id := f.running(t)
	st, err := f.rt.Stats(f.ctx, id)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	if st.Read.IsZero() || st.MemoryUsage == 0 || st.Pids == 0 || st.CPUTotal == 0 {
		t.Errorf("a running container's sample: %+v; want its time, memory, processes and CPU", st)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	got := make(chan runtime.StatsSample, 1)
	done := make(chan error, 1)
	go func() {
		done <- f.rt.StreamStats(ctx, id, func(s runtime.StatsSample) {
			select {
			case got <- s:
			default:
			}
		})
	}()
	select {
	case s := <-got:
		if s.MemoryUsage == 0 {
			t.Errorf("a streamed sample: %+v", s)
		}
	case <-time.After(s.o.Timeout):
		t.Error("no streamed sample")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(s.o.Timeout):
		t.Error("StreamStats did not return when its context ended")
	}
}

// end stops running container id and waits until it has exited; restarts
// reports whether it can start again. A runtime whose containers never
// restart (a Kubernetes Pod) refuses Stop as unsupported, naming itself;
// its Kill then ends the container for good.
func (s *suite) end(t *testing.T, f *fixture, id string) (restarts bool) {
	t.Helper()
	err := f.rt.Stop(f.ctx, id, 2*time.Second)
	if err == nil {
		return true
	}
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), f.rt.Name()) {
		t.Fatalf("stop: %v (a runtime that cannot stop says so with sandbox.ErrUnsupported and its name)", err)
	}
	if err := f.rt.Kill(f.ctx, id); err != nil {
		t.Fatalf("kill, where stop is unsupported: %v", err)
	}
	deadline := time.Now().Add(s.o.Timeout)
	for {
		c, err := f.rt.Inspect(f.ctx, id)
		if err == nil && c.State == runtime.StateExited || time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *suite) events(t *testing.T, f *fixture) {
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	events, errs := f.rt.Events(ctx, f.labels)
	time.Sleep(100 * time.Millisecond) // the subscription reaches the runtime
	id := f.running(t)
	s.end(t, f, id)
	if err := f.rt.Remove(f.ctx, id); err != nil {
		t.Fatalf("remove: %v", err)
	}
	want := []string{"create", "start", "die", "destroy"}
	var seen []string
	timeout := time.After(s.o.Timeout)
	for len(want) > 0 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the events ended: %v (seen %v)", <-errs, seen)
			}
			if ev.ContainerID != id {
				t.Errorf("an event of container %s, not the one made (%s): %+v", ev.ContainerID, id, ev)
				continue
			}
			seen = append(seen, ev.Action)
			if ev.Action == want[0] {
				want = want[1:]
			}
		case <-timeout:
			t.Fatalf("events seen %v; still waiting for %v, in that order", seen, want)
		}
	}
	cancel()
	select {
	case _, ok := <-events:
		for ok {
			_, ok = <-events
		}
	case <-time.After(s.o.Timeout):
		t.Error("the events did not end with their context")
	}
}

func (s *suite) errors(t *testing.T, f *fixture) {
	missing := "sandtray-rtt-missing-" + sandbox.RandomHex(6)
	for what, err := range map[string]error{
		"inspect": func() error { _, err := f.rt.Inspect(f.ctx, missing); return err }(),
		"start":   f.rt.Start(f.ctx, missing),
		"exec": func() error {
			_, err := f.rt.Exec(f.ctx, missing, runtime.ExecOptions{Cmd: []string{"true"}})
			return err
		}(),
		"stats": func() error { _, err := f.rt.Stats(f.ctx, missing); return err }(),
	} {
		if !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("%s of a missing container: %v, want sandbox.ErrNotFound", what, err)
		}
	}
	name := "sandtray-rtt-" + sandbox.RandomHex(6)
	id, err := f.rt.Create(f.ctx, f.options(name))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := f.rt.Create(f.ctx, f.options(name)); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("create with a name in use: %v, want sandbox.ErrConflict", err)
	}
	if _, err := f.rt.Exec(f.ctx, id, runtime.ExecOptions{Cmd: []string{"true"}}); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("exec in a container not started: %v, want sandbox.ErrConflict", err)
	}
	if err := f.rt.Kill(f.ctx, id); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("kill of a container not running: %v, want sandbox.ErrConflict", err)
	}
	o := f.options("")
	o.Image = "sandtray-rtt-no-such-image:" + sandbox.RandomHex(4)
	id, err = f.rt.Create(f.ctx, o)
	if err == nil {
		// A runtime whose nodes fetch the image when the container
		// starts (Kubernetes) says so at the start.
		err = f.rt.Start(f.ctx, id)
		_ = f.rt.Remove(context.WithoutCancel(f.ctx), id)
	}
	if !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("a container from an image there is not: %v, want sandbox.ErrNotFound at its create (or, where nodes fetch images at the start, its start)", err)
	}
}

func (s *suite) pause(t *testing.T, f *fixture) {
	p, ok := f.rt.(runtime.Pauser)
	if !ok {
		t.Skip(f.caps.Why(runtime.CapPause))
	}
	id := f.running(t)
	if err := p.Pause(f.ctx, id); err != nil {
		t.Fatalf("pause: %v", err)
	}
	if c, err := f.rt.Inspect(f.ctx, id); err != nil || c.State != runtime.StatePaused {
		t.Errorf("a paused container: %+v, %v", c, err)
	}
	if err := p.Unpause(f.ctx, id); err != nil {
		t.Fatalf("unpause: %v", err)
	}
	if code, out, _ := f.sh(t, id, "echo awake", nil); code != 0 || out != "awake\n" {
		t.Errorf("exec after unpause: %d %q", code, out)
	}
}

func (s *suite) rename(t *testing.T, f *fixture) {
	r, ok := f.rt.(runtime.Renamer)
	if !ok {
		t.Skip(f.caps.Why(runtime.CapRename))
	}
	id := f.running(t)
	name := "sandtray-rtt-renamed-" + sandbox.RandomHex(6)
	if err := r.Rename(f.ctx, id, name); err != nil {
		t.Fatalf("rename: %v", err)
	}
	if c, err := f.rt.Inspect(f.ctx, name); err != nil || c.ID != id {
		t.Errorf("inspect by the new name: %+v, %v", c, err)
	}
	other := f.running(t)
	if err := r.Rename(f.ctx, other, name); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("rename to a name in use: %v, want sandbox.ErrConflict", err)
	}
}

func (s *suite) commit(t *testing.T, f *fixture) {
	c, ok := f.rt.(runtime.Committer)
	if !ok {
		t.Skip(f.caps.Why(runtime.CapCommit))
	}
	id := f.running(t)
	f.sh(t, id, "mkdir -p /tmp/rtt && echo kept > /tmp/rtt/kept.txt", nil)
	changes, err := c.Diff(f.ctx, id)
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	if !slices.Contains(changes, runtime.Change{Path: "/tmp/rtt/kept.txt", Kind: runtime.ChangeAdded}) {
		t.Errorf("the diff lacks the file written: %+v", changes)
	}
	im, hasImages := f.rt.(runtime.Imager)
	if s.o.ImageRepo == "" || !hasImages {
		t.Skip("no image repository to commit to (Options.ImageRepo), or no image store")
	}
	ref := s.o.ImageRepo + ":rtt"
	imageID, err := c.Commit(f.ctx, id, ref, runtime.ImageConfig{Labels: map[string]string{"sandtray.runtimetest": "commit"}})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	img, err := im.InspectImage(f.ctx, ref)
	if err != nil || img.ID != imageID || img.Labels["sandtray.runtimetest"] != "commit" {
		t.Errorf("the committed image: %+v, %v; want id %s with its label", img, err, imageID)
	}
	o := f.options("")
	o.Image = ref
	made, err := f.rt.Create(f.ctx, o)
	if err != nil {
		t.Fatalf("create from the commit: %v", err)
	}
	if err := f.rt.Start(f.ctx, made); err != nil {
		t.Fatalf("start: %v", err)
	}
	if code, out, _ := f.sh(t, made, "cat /tmp/rtt/kept.txt", nil); code != 0 || out != "kept\n" {
		t.Errorf("a container of the commit reads %q (exit %d)", out, code)
	}
}
