package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// newPeerEngine is a second engine on te's daemon with te's test labels
// (so neither test label tells them apart) and a state dir of its own: to
// te it is what a `sandtray serve --stdio` with its own state dir, or
// another user's engine, is to the tray app. It has a Docker client of its
// own, as Close closes the engine's.
func newPeerEngine(t *testing.T, te *testEngine, configure ...func(*config.Config)) *testEngine {
	t.Helper()
	cfg := te.cfg
	cfg.StateDir = t.TempDir()
	for _, c := range configure {
		c(&cfg)
	}
	return startEngine(t, cfg, te.labels)
}

// startEngine starts an engine of cfg on its own client, with labels, as
// newTestEngine does.
func startEngine(t *testing.T, cfg config.Config, labels map[string]string) *testEngine {
	t.Helper()
	cli := dockertest.Client(t)
	e, err := newEngine(context.Background(), cfg, cli, Options{Labels: labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	t.Cleanup(func() { e.stopLoops() })
	owner := sandbox.Owner{Session: "s-" + sandbox.RandomHex(4), Client: "engine-test 1.0"}
	e.SessionStarted(owner)
	return &testEngine{Engine: e, docker: cli, owner: owner, cfg: cfg, labels: labels}
}

// exit ends an engine as `sandtray serve` does: its ephemeral sandboxes
// removed, then Close.
func (te *testEngine) exit(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := te.RemoveEphemeral(ctx); err != nil {
		t.Errorf("remove ephemeral sandboxes: %v", err)
	}
	if err := te.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
}

func (te *testEngine) ids(t *testing.T) []string {
	t.Helper()
	list, err := te.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range list {
		ids = append(ids, i.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestSecondEngineKeepsItsHandsOff (F37): engine B, started and ended
// while engine A works, neither lists nor touches A's sandboxes (ephemeral,
// persistent, and made persistent after their creation, which only A's
// state dir knows), nor stops a call running in one; names are per engine;
// A's exit leaves B's sandboxes alone in turn; and each engine's next start
// adopts its own sandboxes and no one else's.
func TestSecondEngineKeepsItsHandsOff(t *testing.T) {
	ctx := context.Background()
	a := newTestEngine(t)
	eph := a.create(t, sandbox.CreateRequest{Name: "work"})
	per := a.create(t, sandbox.CreateRequest{Persistent: true})
	later := a.create(t, sandbox.CreateRequest{})
	if _, err := a.SetPersistent(ctx, a.owner, later.ID, true); err != nil {
		t.Fatal(err)
	}
	mine := []string{eph.ID, per.ID, later.ID}
	slices.Sort(mine)
	a.command(t, per.ID, "echo kept > note.txt")

	// A call runs in A's sandbox throughout B's life, until A lets it end.
	type result struct {
		out sandbox.ExecResult
		err error
	}
	running := make(chan result, 1)
	go func() {
		out, err := a.ExecCommand(ctx, a.owner, eph.ID, sandbox.CommandRequest{
			Command: "touch /tmp/started; while [ ! -e /tmp/go ]; do sleep 0.05; done; echo finished >/tmp/finished", Timeout: 5 * time.Minute})
		running <- result{out.Result, err}
	}()
	eventually(t, 30*time.Second, "the long call never started", func() bool {
		return a.command(t, eph.ID, "test -e /tmp/started && echo yes").Stdout == "yes\n"
	})

	// B reaps at once what it takes for an ended session's ephemeral sandbox.
	b := newPeerEngine(t, a, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{} })
	if got := b.ids(t); len(got) != 0 {
		t.Errorf("engine B lists %d sandboxes of engine A", len(got))
	}
	if _, err := b.Get(ctx, "work"); err == nil {
		t.Error("engine B resolves engine A's sandbox by name")
	}
	bWork := b.create(t, sandbox.CreateRequest{Name: "work", Persistent: true}) // names are per engine
	b.create(t, sandbox.CreateRequest{})
	if got := b.command(t, "work", "echo b").Stdout; got != "b\n" {
		t.Errorf("engine B's own \"work\": %q", got)
	}
	if got := a.ids(t); !slices.Equal(got, mine) {
		t.Errorf("engine A lists %v, want only its own %v", got, mine)
	}
	b.exit(t)

	for _, id := range mine {
		if _, err := a.docker.Inspect(ctx, id); err != nil {
			t.Errorf("engine B's start and exit removed engine A's sandbox %s: %v", sandbox.ShortID(id), err)
		}
	}
	if got := a.command(t, per.ID, "cat note.txt").Stdout; got != "kept\n" {
		t.Errorf("engine A's persistent sandbox after B: %q", got)
	}
	a.command(t, eph.ID, "touch /tmp/go")
	if r := <-running; r.err != nil || r.out.ExitCode != 0 || a.command(t, eph.ID, "cat /tmp/finished").Stdout != "finished\n" {
		t.Errorf("the call running during B's life ended with %+v, %v; want it to run to its end", r.out, r.err)
	}
	if got := a.command(t, "work", "hostname").Stdout; got != "work\n" {
		t.Errorf("engine A's \"work\" is %q after B's exit", got)
	}

	a.exit(t)
	if _, err := a.docker.Inspect(ctx, bWork.ID); err != nil {
		t.Errorf("engine A's exit removed engine B's persistent sandbox: %v", err)
	}
	again := startEngine(t, a.cfg, a.labels) // A's next start: the same identity
	if got, want := again.ids(t), []string{per.ID, later.ID}; !slices.Equal(got, sortedCopy(want)) {
		t.Errorf("engine A after a restart lists %v, want its persistent %v", got, sortedCopy(want))
	}
	bAgain := startEngine(t, b.cfg, b.labels)
	if got := bAgain.ids(t); !slices.Equal(got, []string{bWork.ID}) {
		t.Errorf("engine B after a restart lists %v, want only its own %s", got, bWork.ID)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestPoolSparesSurviveAnotherEngine (F37): engine B's start (its sweep of
// leftover spares) and its exit (its pool's drain) leave engine A's spares
// in place and in A's pool, and A's exit leaves B's.
func TestPoolSparesSurviveAnotherEngine(t *testing.T) {
	ctx := context.Background()
	a := newPoolEngine(t, 2)
	spares := a.readyIDs()
	b := newPeerEngine(t, a, func(c *config.Config) { c.Pool.Size = 1 })
	b.waitPoolFull(t)
	bSpares := b.readyIDs()
	b.exit(t)
	for id := range spares {
		if _, err := a.docker.Inspect(ctx, id); err != nil {
			t.Errorf("engine B removed engine A's spare %s: %v", sandbox.ShortID(id), err)
		}
	}
	if got := a.readyIDs(); len(got) != len(spares) {
		t.Errorf("engine A's pool holds %d spares after B, want %d", len(got), len(spares))
	}
	info := a.create(t, sandbox.CreateRequest{})
	if !spares[info.ID] {
		t.Errorf("engine A's create after B did not take one of its spares")
	}

	other := newPeerEngine(t, a, func(c *config.Config) { c.Pool.Size = 1 })
	other.waitPoolFull(t)
	cSpares := other.readyIDs()
	a.exit(t)
	for id := range cSpares {
		if _, err := a.docker.Inspect(ctx, id); err != nil {
			t.Errorf("engine A's exit removed engine C's spare %s: %v", sandbox.ShortID(id), err)
		}
	}
	for id := range bSpares {
		if _, err := a.docker.Inspect(ctx, id); err == nil {
			t.Errorf("engine B's own spare %s outlived its exit", sandbox.ShortID(id))
		}
	}
}
