package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestLogicReaperRemovesIdleEphemeral: an ephemeral sandbox idle past
// sandbox.idle_ttl is removed, container and all; a persistent one as idle
// (created before it) stays.
func TestLogicReaperRemovesIdleEphemeral(t *testing.T) {
	le := newLogicEngine(t, func(c *config.Config) { c.Sandbox.IdleTTL = config.Duration{Duration: 150 * time.Millisecond} })
	per := le.create(t, sandbox.CreateRequest{Persistent: true})
	eph := le.create(t, sandbox.CreateRequest{})
	eventually(t, seconds, "the idle ephemeral sandbox is reaped", func() bool {
		return le.status(eph.ID) == "" && containerState(le.rt, eph.ID) == ""
	})
	if le.status(per.ID) != sandbox.StatusRunning || containerState(le.rt, per.ID) != "running" {
		t.Errorf("the persistent sandbox, idle as long, was touched: %q, container %q", le.status(per.ID), containerState(le.rt, per.ID))
	}
}

// TestLogicReaperSparesABusySandbox: a sandbox a call is running in is
// never reaped, however long the call; once the call ends, its idle time
// counts from its start and it goes.
func TestLogicReaperSparesABusySandbox(t *testing.T) {
	le := newLogicEngine(t, func(c *config.Config) { c.Sandbox.IdleTTL = config.Duration{Duration: 150 * time.Millisecond} })
	busy := le.create(t, sandbox.CreateRequest{})
	started, release := make(chan struct{}), make(chan struct{})
	le.rt.SetHandler(func(p *fakeruntime.Proc) int {
		if p.Script() == "long" {
			close(started)
			select {
			case <-release:
				return 0
			case <-p.Done():
				return 137
			}
		}
		return p.Builtin()
	})
	result := make(chan sandbox.ExecResult, 1)
	go func() {
		out, _ := le.ExecCommand(context.Background(), le.owner, busy.ID, sandbox.CommandRequest{Command: "long", Timeout: time.Minute, Wait: time.Minute})
		result <- out.Result
	}()
	<-started
	// Made after the call started: once it is reaped, the busy sandbox has
	// been idle as long, as far as its last use says.
	idle := le.create(t, sandbox.CreateRequest{})
	eventually(t, seconds, "the idle sandbox made after the call is reaped", func() bool { return le.status(idle.ID) == "" })
	if le.status(busy.ID) != sandbox.StatusRunning {
		t.Fatal("the reaper removed a sandbox a call was running in")
	}
	close(release)
	if r := <-result; r.ExitCode != 0 || r.TimedOut {
		t.Errorf("the long call ended with %+v; want it to run to its end", r)
	}
	eventually(t, seconds, "the sandbox is reaped once its call ended", func() bool {
		return le.status(busy.ID) == "" && containerState(le.rt, busy.ID) == ""
	})
}

// TestLogicSessionEndReapsEphemeral: when its session ends (and the grace
// has passed), a session's ephemeral sandbox goes at once, whatever its
// idle time; its persistent one stays, and so does another session's.
func TestLogicSessionEndReapsEphemeral(t *testing.T) {
	le := newLogicEngine(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: 50 * time.Millisecond} })
	ctx := context.Background()
	eph := le.create(t, sandbox.CreateRequest{})
	per := le.create(t, sandbox.CreateRequest{Persistent: true})
	other := sandbox.Owner{Session: "s-other", Client: "other 1.0"}
	le.SessionStarted(other)
	theirs, err := le.Create(ctx, other, sandbox.CreateRequest{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	le.SessionEnded(le.owner.Session)
	eventually(t, seconds, "the ended session's ephemeral sandbox is reaped", func() bool {
		return le.status(eph.ID) == "" && containerState(le.rt, eph.ID) == ""
	})
	if le.status(per.ID) == "" {
		t.Error("the ended session's persistent sandbox was reaped")
	}
	if le.status(theirs.ID) == "" {
		t.Error("another session's ephemeral sandbox was reaped")
	}
}
