package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/statedir"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestLogicEnginesKeepToTheirOwn (docs/security.md F37): two engines on
// one daemon, told apart by nothing but their identity (same test label,
// state dirs of their own): B neither lists nor resolves A's sandboxes,
// names are per engine, B's reaper (which takes every ephemeral sandbox
// of an unknown session as expired) and B's exit leave A's alone, and A's
// exit leaves B's; an engine with no test label (a user's) adopts no test
// container, even on A's state dir.
func TestLogicEnginesKeepToTheirOwn(t *testing.T) {
	ctx := context.Background()
	rt := newFakeDaemon()
	a := startLogicEngine(t, rt, nil)
	work := a.create(t, sandbox.CreateRequest{Name: "work"})
	per := a.create(t, sandbox.CreateRequest{Persistent: true})
	mine := sortedCopy([]string{work.ID, per.ID})

	b := startLogicEngine(t, rt, a.labels, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{} })
	if got := infoIDs(mustList(t, b)); len(got) != 0 {
		t.Errorf("engine B lists engine A's sandboxes %v", got)
	}
	_, err := b.Get(ctx, "work")
	wantKind(t, err, sandbox.ErrNotFound)
	_, err = b.ExecCommand(ctx, b.owner, work.ID, sandbox.CommandRequest{Command: "true"})
	wantKind(t, err, sandbox.ErrNotFound)
	bWork := b.create(t, sandbox.CreateRequest{Name: "work", Persistent: true}) // names are per engine
	bEph := b.create(t, sandbox.CreateRequest{})
	if bWork.ID == work.ID || containerName(t, b, bWork.ID) == containerName(t, a, work.ID) {
		t.Errorf("the two engines' \"work\" share a container or its name (%s)", containerName(t, a, work.ID))
	}
	if got := b.run(t, "work", sandbox.CommandRequest{Command: "hostname"}).Stdout; got != "work\n" {
		t.Errorf("engine B's own work: hostname %q", got)
	}
	b.reapOnce(ctx) // a pass now: A's ephemeral "work" is of a session B never saw
	if err := b.RemoveEphemeral(ctx); err != nil {
		t.Fatal(err)
	}
	b.close(t)
	for _, id := range mine {
		if containerState(rt, id) != "running" {
			t.Errorf("engine B's reaper or exit touched engine A's sandbox %s", sandbox.ShortID(id))
		}
	}
	if got := infoIDs(mustList(t, a)); !slices.Equal(got, mine) {
		t.Errorf("engine A lists %v, want its own %v", got, mine)
	}
	if containerState(rt, bEph.ID) != "" {
		t.Error("engine B's exit left its ephemeral sandbox")
	}

	if err := a.RemoveEphemeral(ctx); err != nil {
		t.Fatal(err)
	}
	if containerState(rt, bWork.ID) != "running" {
		t.Error("engine A's exit removed engine B's persistent sandbox")
	}
	a.close(t)
	user := startLogicEngineWith(t, rt, a.cfg, map[string]string{}) // no test label, A's state dir
	if got := infoIDs(mustList(t, user)); len(got) != 0 {
		t.Errorf("an engine without a test label adopted test containers %v", got)
	}
	user.close(t)
	again := startLogicEngineWith(t, rt, a.cfg, a.labels)
	if got := infoIDs(mustList(t, again)); !slices.Equal(got, []string{per.ID}) {
		t.Errorf("engine A after a restart lists %v, want its persistent %s", got, per.ID)
	}
}

// TestLogicOneEnginePerStateDir (docs/security.md F55): a second engine
// on a running engine's state dir (a client configured with `sandtray
// serve --stdio` while the app runs, or two such clients) would be the same
// engine twice, and would adopt the first one's sandboxes and reap the
// ephemeral ones as of sessions it never saw. It is refused, saying what
// to do instead, and the first engine's sandbox is untouched; once the
// first has closed, the state dir is free again.
func TestLogicOneEnginePerStateDir(t *testing.T) {
	ctx := context.Background()
	rt := newFakeDaemon()
	first := startLogicEngine(t, rt, nil, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{} })
	box := first.create(t, sandbox.CreateRequest{})
	second, err := New(ctx, first.cfg, Options{Runtime: rt.Connect(), Labels: first.labels, Tick: logicTick, CgroupRoot: t.TempDir()})
	if err == nil {
		second.reapOnce(ctx)
		second.Close(ctx)
		t.Fatalf("a second engine started on a running engine's state dir; the first one's ephemeral sandbox is then %q (its container %q)",
			first.status(box.ID), containerState(rt, box.ID))
	}
	if !errors.Is(err, statedir.ErrLocked) || !strings.Contains(err.Error(), "sandtray-mcp") || !strings.Contains(err.Error(), "XDG_STATE_HOME") {
		t.Errorf("the second engine's error: %v; want it to say another engine runs there, and to use sandtray-mcp or a state dir of its own", err)
	}
	if got := first.run(t, box.ID, sandbox.CommandRequest{Command: "hostname"}); got.ExitCode != 0 || containerState(rt, box.ID) != "running" {
		t.Errorf("the first engine's sandbox after the refused start: exit %d, container %q", got.ExitCode, containerState(rt, box.ID))
	}
	first.close(t)
	startLogicEngineWith(t, rt, first.cfg, first.labels).close(t)
}

func containerName(t *testing.T, le *logicEngine, id string) string {
	t.Helper()
	c, err := le.rt.Inspect(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c.Name
}

// TestLogicSessionsHaveTheirOwnDefault: a call with no sandbox_id runs in
// its session's default sandbox, made on first use and owned by that
// session; each session has its own, concurrent first calls of one session
// make one; when a session ends its default goes, and the other's stays.
func TestLogicSessionsHaveTheirOwnDefault(t *testing.T) {
	le := newLogicEngine(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: 50 * time.Millisecond} })
	ctx := context.Background()
	other := sandbox.Owner{Session: "s-other", Client: "other 2.0"}
	le.SessionStarted(other)

	ids := make(chan string, 3)
	for range 3 {
		go func() {
			out, err := le.ExecCommand(ctx, le.owner, "", sandbox.CommandRequest{Command: "true"})
			if err != nil {
				t.Error(err)
			}
			ids <- out.SandboxID
		}()
	}
	first := <-ids
	if a, b := <-ids, <-ids; a != first || b != first {
		t.Fatalf("three first calls of one session ran in %s, %s and %s; want one default sandbox", sandbox.ShortID(first), sandbox.ShortID(a), sandbox.ShortID(b))
	}
	theirs, err := le.ExecCommand(ctx, other, "", sandbox.CommandRequest{Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if theirs.SandboxID == first {
		t.Fatal("two sessions share a default sandbox")
	}
	for id, owner := range map[string]sandbox.Owner{first: le.owner, theirs.SandboxID: other} {
		if info, err := le.Get(ctx, id); err != nil || info.Owner != owner || info.Persistent {
			t.Errorf("default sandbox %s: %+v, %v; want ephemeral, owned by %+v", sandbox.ShortID(id), info, err, owner)
		}
	}
	if len(mustList(t, le)) != 2 {
		t.Errorf("%d sandboxes, want the two defaults", len(mustList(t, le)))
	}

	le.SessionEnded(le.owner.Session)
	eventually(t, seconds, "the ended session's default sandbox is reaped", func() bool { return le.status(first) == "" })
	if le.status(theirs.SandboxID) != sandbox.StatusRunning {
		t.Error("the other session's default sandbox went with the first session")
	}
	again, err := le.ExecCommand(ctx, other, "", sandbox.CommandRequest{Command: "true"})
	if err != nil || again.SandboxID != theirs.SandboxID {
		t.Errorf("the other session's next call ran in %s (%v), want its default %s", sandbox.ShortID(again.SandboxID), err, sandbox.ShortID(theirs.SandboxID))
	}
}
