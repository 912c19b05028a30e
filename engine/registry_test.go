package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// gate holds the first Docker call it is put on until opened, and says when
// that call has arrived.
type gate struct {
	once    sync.Once
	arrived chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{arrived: make(chan struct{}), open: make(chan struct{})} }

// hold blocks the first caller until the gate opens; later callers pass.
func (g *gate) hold() {
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.arrived)
		<-g.open
	}
}

// slowRemove holds the first Remove at its gate.
type slowRemove struct {
	runtime.Full
	g *gate
}

func (d slowRemove) Remove(ctx context.Context, id string) error {
	d.g.hold()
	return d.Full.Remove(ctx, id)
}

// slowCreate holds the first Create at its gate.
type slowCreate struct {
	runtime.Full
	g *gate
}

func (d slowCreate) Create(ctx context.Context, o runtime.CreateOptions) (string, error) {
	d.g.hold()
	return d.Full.Create(ctx, o)
}

func waitFor(t *testing.T, ch <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("after %s: %s", within, what)
	}
}

// TestReaperNeverRemovesAnAcquiredSandbox: once the reaper has picked an
// idle sandbox, a call can no longer acquire it: the call is refused with a
// sentence to act on instead of running in a container being deleted.
func TestReaperNeverRemovesAnAcquiredSandbox(t *testing.T) {
	g := newGate()
	te := newTestEngineOn(t, func(d runtime.Full) runtime.Full { return slowRemove{d, g} })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.SessionEnded(te.owner.Session) // session_grace is 2 minutes: not yet
	te.reg.Locked(func() { te.reg.SessionsLocked()[te.owner.Session].Ended = time.Now().Add(-time.Hour) })
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		te.reapOnce(ctx)
	}()
	waitFor(t, g.arrived, 20*time.Second, "the reaper never removed the expired sandbox")
	_, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "echo ran"})
	close(g.open)
	<-reaped
	if err == nil {
		t.Fatal("a call acquired a sandbox the reaper was removing, and ran in it")
	}
	wantKind(t, err, sandbox.ErrNotFound)
}

// TestFirstCallsOfTwoSessionsDoNotWait: a session's first call, whose
// default sandbox is slow to create, never holds up another session's first
// call, and a call of the same session that gives up returns at once.
func TestFirstCallsOfTwoSessionsDoNotWait(t *testing.T) {
	g := newGate()
	te := newTestEngineOn(t, func(d runtime.Full) runtime.Full { return slowCreate{d, g} })
	ctx := context.Background()
	slow := sandbox.Owner{Session: "slow-" + randomHex(3), Client: "slow"}
	te.SessionStarted(slow)
	slowDone := make(chan error, 1)
	go func() {
		_, err := te.ExecCommand(ctx, slow, "", sandbox.CommandRequest{Command: "true"})
		slowDone <- err
	}()
	waitFor(t, g.arrived, 20*time.Second, "the slow session's create never reached Docker")
	defer func() {
		close(g.open)
		if err := <-slowDone; err != nil {
			t.Errorf("the slow session's first call, once its create went on: %v", err)
		}
	}()

	done := make(chan error, 1)
	go func() {
		_, err := te.ExecCommand(ctx, te.owner, "", sandbox.CommandRequest{Command: "true"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the other session's first call: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("another session's first call waited for the slow session's create")
	}

	quick, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err := te.ExecCommand(quick, slow, "", sandbox.CommandRequest{Command: "true"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(started) > 5*time.Second {
		t.Errorf("a second call of the slow session with a 500ms deadline: %v after %s; want its deadline, at once", err, time.Since(started))
	}
}

// TestSessionEndedDoesNotReapInline: ending a session returns at once, even
// when removing its sandboxes is slow; the reaper removes them after.
func TestSessionEndedDoesNotReapInline(t *testing.T) {
	g := newGate()
	te := newTestEngineOn(t, func(d runtime.Full) runtime.Full { return slowRemove{d, g} }, func(c *config.Config) {
		c.Sandbox.SessionGrace = config.Duration{Duration: 0}
	})
	id := te.create(t, sandbox.CreateRequest{}).ID
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		te.SessionEnded(te.owner.Session)
	}()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		close(g.open)
		t.Fatal("SessionEnded waited for the removal of the session's sandboxes")
	}
	close(g.open)
	eventually(t, 30*time.Second, "the ended session's sandbox was never reaped", func() bool {
		_, err := te.Get(context.Background(), id)
		return errors.Is(err, sandbox.ErrNotFound)
	})
}

// TestEndedSessionsArePruned: a session that ended, past its grace, and owns
// no sandbox is forgotten.
func TestEndedSessionsArePruned(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: 0} })
	for i := range 50 {
		s := sandbox.Owner{Session: "gone-" + randomHex(4), Client: "c"}
		te.SessionStarted(s)
		te.SessionEnded(s.Session)
		_ = i
	}
	eventually(t, 10*time.Second, "ended sessions are never pruned", func() bool {
		n := 0
		te.reg.Locked(func() { n = len(te.reg.SessionsLocked()) })
		return n <= 1 // the test's own, live
	})
}

// A call's last use reaches the state dir soon after the call (coalesced,
// off the call's path) and at Close at the latest, so the idle TTL counts
// from it after a restart.
func TestLastUseIsSaved(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Persistent: true})
	saved := func() time.Time {
		st, ok, err := te.store.LoadState(info.ID)
		if err != nil || !ok {
			t.Fatalf("load state: %v (found %v)", err, ok)
		}
		return st.LastUsed
	}
	te.command(t, info.ID, "true")
	used, _ := te.Get(ctx, info.ID)
	if !used.LastUsed.After(info.LastUsed) {
		t.Fatalf("last use after a call = %v, not after the create's %v", used.LastUsed, info.LastUsed)
	}
	eventually(t, 5*time.Second, "the call's last use saved", func() bool { return saved().Equal(used.LastUsed) })

	te.command(t, info.ID, "true")
	again, _ := te.Get(ctx, info.ID)
	if err := te.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := saved(); !got.Equal(again.LastUsed) {
		t.Errorf("after Close the saved last use is %v, want the last call's %v", got, again.LastUsed)
	}
}
