package engine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestLogicCreateListStopStartRemove: a sandbox is listed once created,
// with its name and owner; stop stops its container and a later call
// starts it again and runs; delete removes the container and the listing,
// and a second delete is not found.
func TestLogicCreateListStopStartRemove(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	a := le.create(t, sandbox.CreateRequest{Name: "alpha"})
	b := le.create(t, sandbox.CreateRequest{})
	if a.Name != "alpha" || a.Status != sandbox.StatusRunning || a.Owner != le.owner || a.Image != logicImage {
		t.Fatalf("created %+v, want alpha, running, our owner, image %s", a, logicImage)
	}
	if !validName.MatchString(b.Name) || b.Name == a.Name {
		t.Errorf("unnamed sandbox got name %q", b.Name)
	}
	list, err := le.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := infoIDs(list); !slices.Equal(got, sortedCopy([]string{a.ID, b.ID})) {
		t.Errorf("listed %v, want %v", got, []string{a.ID, b.ID})
	}
	if got, err := le.Get(ctx, "alpha"); err != nil || got.ID != a.ID {
		t.Errorf("get by name: %+v, %v", got, err)
	}
	if got, err := le.Get(ctx, a.ID[:8]); err != nil || got.ID != a.ID {
		t.Errorf("get by id prefix: %+v, %v", got, err)
	}
	if _, err := le.Create(ctx, le.owner, sandbox.CreateRequest{Name: "alpha"}, nil); !errorsIs(err, sandbox.ErrConflict) {
		t.Errorf("a second sandbox named alpha: %v, want a conflict", err)
	}

	st, err := le.Stop(ctx, le.owner, "alpha")
	if err != nil || st.Status != sandbox.StatusStopped {
		t.Fatalf("stop: %+v, %v", st, err)
	}
	if got := containerState(le.rt, a.ID); got != "exited" {
		t.Errorf("stopped sandbox's container is %q, want exited", got)
	}
	if got := le.run(t, "alpha", sandbox.CommandRequest{Command: "echo back"}); got.Stdout != "back\n" || got.ExitCode != 0 {
		t.Errorf("a call after stop: %+v, want it to start the sandbox and print back", got)
	}
	if got := containerState(le.rt, a.ID); got != "running" {
		t.Errorf("after a call the container is %q, want running", got)
	}
	if got := le.status("alpha"); got != sandbox.StatusRunning {
		t.Errorf("after a call the sandbox is %q, want running", got)
	}

	if err := le.Delete(ctx, le.owner, "alpha"); err != nil {
		t.Fatal(err)
	}
	if got := containerState(le.rt, a.ID); got != "" {
		t.Errorf("deleted sandbox's container is still there (%s)", got)
	}
	if _, err := le.Get(ctx, "alpha"); !errorsIs(err, sandbox.ErrNotFound) {
		t.Errorf("get after delete: %v, want not found", err)
	}
	if err := le.Delete(ctx, le.owner, a.ID); !errorsIs(err, sandbox.ErrNotFound) {
		t.Errorf("second delete: %v, want not found", err)
	}
	if got := infoIDs(mustList(t, le)); !slices.Equal(got, []string{b.ID}) {
		t.Errorf("after delete: %v, want only %s", got, b.ID)
	}
}

func infoIDs(list []sandbox.Info) []string {
	var ids []string
	for _, i := range list {
		ids = append(ids, i.ID)
	}
	slices.Sort(ids)
	return ids
}

func mustList(t *testing.T, le *logicEngine) []sandbox.Info {
	t.Helper()
	list, err := le.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestLogicRemovedBehindTheEnginesBack: a container removed outside the
// engine (docker rm) leaves the engine's list by its event, and a call
// naming it is refused as not found; with no events to tell it (its loops
// stopped), the call itself finds out and drops the sandbox.
func TestLogicRemovedBehindTheEnginesBack(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	a := le.create(t, sandbox.CreateRequest{Name: "a"})
	b := le.create(t, sandbox.CreateRequest{Name: "b"})
	if err := le.rt.Connect().Remove(ctx, a.ID); err != nil { // another client: the Docker CLI
		t.Fatal(err)
	}
	eventually(t, seconds, "the removed sandbox leaves the list", func() bool {
		return slices.Equal(infoIDs(mustList(t, le)), []string{b.ID})
	})
	_, err := le.ExecCommand(ctx, le.owner, a.ID, sandbox.CommandRequest{Command: "true"})
	wantKind(t, err, sandbox.ErrNotFound)

	le.stopLoops() // no events any more: the call must find out itself
	if err := le.rt.Connect().Remove(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err = le.ExecCommand(ctx, le.owner, "b", sandbox.CommandRequest{Command: "true"})
	wantKind(t, err, sandbox.ErrNotFound)
	if !strings.Contains(err.Error(), "no longer exists") {
		t.Errorf("the call's error %q does not say the sandbox no longer exists", err)
	}
	if list := mustList(t, le); len(list) != 0 {
		t.Errorf("after the call found it gone, the engine still lists %v", infoIDs(list))
	}
}

// TestLogicStoppedBehindTheEnginesBack: a container stopped outside the
// engine shows as stopped (its events), and the next call starts it again
// and runs; with the events missed, the call's refused exec starts it.
func TestLogicStoppedBehindTheEnginesBack(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	a := le.create(t, sandbox.CreateRequest{})
	if err := le.rt.Connect().Stop(ctx, a.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, seconds, "the sandbox stopped outside shows as stopped", func() bool {
		return le.status(a.ID) == sandbox.StatusStopped
	})
	if got := le.run(t, a.ID, sandbox.CommandRequest{Command: "echo up"}); got.Stdout != "up\n" {
		t.Errorf("call after an outside stop: %+v", got)
	}
	le.stopLoops()
	if err := le.rt.Connect().Stop(ctx, a.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if le.status(a.ID) != sandbox.StatusRunning {
		t.Fatal("without events the engine should still believe the sandbox runs")
	}
	if got := le.run(t, a.ID, sandbox.CommandRequest{Command: "echo again"}); got.Stdout != "again\n" {
		t.Errorf("call after a stop the engine missed: %+v", got)
	}
	if got := containerState(le.rt, a.ID); got != "running" {
		t.Errorf("container is %q after the call, want running", got)
	}
}

// TestLogicRestartAdoptsAndReaps: after a crash, a new engine on the same
// state dir adopts the persistent sandbox with its owner, files and log,
// and removes the ephemeral one whose session it never saw.
func TestLogicRestartAdoptsAndReaps(t *testing.T) {
	rt := newFakeDaemon()
	le := startLogicEngine(t, rt, nil, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{} })
	ctx := context.Background()
	keep := le.create(t, sandbox.CreateRequest{Name: "keep", Persistent: true})
	drop := le.create(t, sandbox.CreateRequest{Name: "drop"})
	le.run(t, "keep", sandbox.CommandRequest{Command: "echo remembered > note.txt"})
	le.stopLoops() // the process dies: nothing is cleaned up

	again := startLogicEngineWith(t, rt, le.cfg, le.labels)
	list := mustList(t, again)
	if len(list) != 1 || list[0].ID != keep.ID || !list[0].Persistent || list[0].Owner != le.owner || list[0].Name != "keep" {
		t.Fatalf("after restart: %+v, want only the persistent sandbox, owner kept", list)
	}
	if got := containerState(rt, drop.ID); got != "" {
		t.Errorf("the expired ephemeral sandbox's container is still there (%s)", got)
	}
	if logs, _ := again.Logs(ctx, "keep", 0); len(logs) != 2 || logs[1].Input != "echo remembered > note.txt" {
		t.Errorf("activity after restart: %+v", logs)
	}
	if got := again.run(t, "keep", sandbox.CommandRequest{Command: "cat note.txt"}); got.Stdout != "remembered\n" {
		t.Errorf("file in the adopted sandbox: %+v", got)
	}
}

// stopAfterList stops container id through another client of the daemon
// right after the engine's first list of its containers (its adoption at
// start-up), as a user's `docker stop` at that moment would.
type stopAfterList struct {
	*fakeruntime.Runtime
	id   string
	once sync.Once
}

func (s *stopAfterList) List(ctx context.Context, labels map[string]string, all bool) ([]runtime.Container, error) {
	list, err := s.Runtime.List(ctx, labels, all)
	s.once.Do(func() {
		if err := s.Runtime.Connect().Stop(ctx, s.id, time.Second); err != nil {
			panic(err)
		}
	})
	return list, err
}

// TestLogicStoppedWhileTheEngineStarts: a sandbox stopped outside the
// engine just after its start-up listed it shows as stopped: the engine
// follows the daemon's events from before it lists what it adopts, so
// nothing that happens in between is missed.
func TestLogicStoppedWhileTheEngineStarts(t *testing.T) {
	rt := newFakeDaemon()
	first := startLogicEngine(t, rt, nil)
	id := first.create(t, sandbox.CreateRequest{Persistent: true}).ID
	first.stopLoops() // a crash

	cli := &stopAfterList{Runtime: rt.Connect(), id: id}
	e, err := New(context.Background(), first.cfg, Options{Runtime: cli, Labels: first.labels, Tick: logicTick, CgroupRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	if got := containerState(rt, id); got != "exited" {
		t.Fatalf("the container is %q; the test meant to stop it during the start-up", got)
	}
	eventually(t, seconds, "the sandbox stopped during the start-up shows as stopped", func() bool {
		info, err := e.Get(context.Background(), id)
		return err == nil && info.Status == sandbox.StatusStopped
	})
}

// TestLogicDaemonGoesAwayAndComesBack: when the daemon stops answering,
// watchers see it disconnected with a notice, and calls fail as
// unavailable; when it is back, a notice says so, the engine follows its
// events again, and calls run.
func TestLogicDaemonGoesAwayAndComesBack(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	id := le.create(t, sandbox.CreateRequest{}).ID
	w := le.Watch(ctx)
	le.rt.SetDown(true)
	waitSnapshot(t, w, "the daemon shown as gone, with a notice", func(s sandbox.Snapshot) bool {
		return !s.Docker.Connected && len(s.Notices) > 0 && s.Notices[len(s.Notices)-1].Title == "Docker went away"
	})
	_, err := le.ExecCommand(ctx, le.owner, id, sandbox.CommandRequest{Command: "true"})
	wantKind(t, err, sandbox.ErrUnavailable)
	if le.status(id) == "" {
		t.Fatal("a call refused by a daemon that is down dropped the sandbox")
	}
	le.rt.SetDown(false)
	waitSnapshot(t, w, "the daemon shown as back, with a notice", func(s sandbox.Snapshot) bool {
		return s.Docker.Connected && s.Notices[len(s.Notices)-1].Title == "Docker is back"
	})
	if got := le.run(t, id, sandbox.CommandRequest{Command: "echo back"}); got.Stdout != "back\n" {
		t.Errorf("a call once the daemon is back: %+v", got)
	}
	if err := le.rt.Connect().Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	eventually(t, seconds, "a sandbox removed once the daemon is back leaves the list", func() bool { return le.status(id) == "" })
}

// TestLogicListShowsResourceUse: the list reads each running sandbox's
// use now: its memory limit, memory in use and processes; a stopped
// sandbox shows none.
func TestLogicListShowsResourceUse(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	a := le.create(t, sandbox.CreateRequest{MemoryMB: 256})
	list := mustList(t, le)
	if len(list) != 1 {
		t.Fatalf("listed %d sandboxes", len(list))
	}
	if s := list[0].Stats; s.MemoryLimit != 256<<20 || s.MemoryBytes == 0 || s.Pids == 0 {
		t.Errorf("a running sandbox's use %+v, want its 256 MB limit, some memory and a process", s)
	}
	if _, err := le.Stop(ctx, le.owner, a.ID); err != nil {
		t.Fatal(err)
	}
	if s := mustList(t, le)[0].Stats; s != (sandbox.Stats{}) {
		t.Errorf("a stopped sandbox's use %+v, want none", s)
	}
}

// TestLogicCreateLimitsKillAndStopAll: creates stop at
// limits.max_sandboxes (stopped and persistent ones count) and while the
// user paused them; kill stops a sandbox at once; "stop all ephemeral"
// stops those and leaves the persistent one running.
func TestLogicCreateLimitsKillAndStopAll(t *testing.T) {
	le := newLogicEngine(t, func(c *config.Config) { c.Limits.MaxSandboxes = 3 })
	ctx := context.Background()
	a := le.create(t, sandbox.CreateRequest{})
	b := le.create(t, sandbox.CreateRequest{})
	per := le.create(t, sandbox.CreateRequest{Persistent: true})
	_, err := le.Create(ctx, le.owner, sandbox.CreateRequest{}, nil)
	wantKind(t, err, sandbox.ErrTooLarge)
	if n := le.rt.Calls("Create"); n != 3 {
		t.Errorf("%d creates reached the daemon, want 3: the refused one must not", n)
	}
	if err := le.Kill(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := containerState(le.rt, a.ID); got != "exited" || le.status(a.ID) != sandbox.StatusStopped {
		t.Errorf("killed sandbox: container %q, status %q", got, le.status(a.ID))
	}
	_, err = le.Create(ctx, le.owner, sandbox.CreateRequest{}, nil)
	wantKind(t, err, sandbox.ErrTooLarge) // a stopped sandbox still counts
	if err := le.Delete(ctx, le.owner, a.ID); err != nil {
		t.Fatal(err)
	}
	le.SetPaused(true)
	_, err = le.Create(ctx, le.owner, sandbox.CreateRequest{}, nil)
	wantKind(t, err, sandbox.ErrPaused)
	le.SetPaused(false)
	c := le.create(t, sandbox.CreateRequest{})

	if err := le.StopEphemeral(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]sandbox.Status{b.ID: sandbox.StatusStopped, c.ID: sandbox.StatusStopped, per.ID: sandbox.StatusRunning} {
		if got := le.status(id); got != want {
			t.Errorf("after stopping all ephemeral sandboxes, %s is %q, want %q", sandbox.ShortID(id), got, want)
		}
	}
}
