package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// eventLoop follows Docker's container events for managed containers, so a
// sandbox stopped or removed behind the engine's back shows at once:
// first on events, the stream New opened before its adoption, then on
// the streams it opens again after errors. It does not return until ctx
// is done.
func (e *Engine) eventLoop(ctx context.Context, tick time.Duration, events <-chan runtime.Event, errs <-chan error) {
	for ctx.Err() == nil {
		if events == nil {
			// Every managed container's (an adopted one of an older
			// Sandtray has no identity); onEvent acts only on its own.
			events, errs = e.docker.Events(ctx, e.cfg().managed())
		}
		for ev := range events {
			e.onEvent(ctx, ev.ContainerID, ev.Action)
		}
		if err := <-errs; err != nil && ctx.Err() == nil {
			e.log.Warn("docker events interrupted; reconnecting", "err", err)
		}
		events, errs = nil, nil
		select {
		case <-ctx.Done():
		case <-time.After(tick):
			if e.dockerStatus.Check(ctx) {
				e.resync(ctx) // catch up on what happened while disconnected
			}
		}
	}
}

func (e *Engine) onEvent(ctx context.Context, id, action string) {
	b, ok := e.reg.BoxOf(id)
	if !ok {
		if action == "die" || action == "destroy" {
			e.warmPart.WarmPool().Gone(ctx, id) // a spare died or was removed outside Sandtray
		}
		return
	}
	switch action {
	case "destroy":
		e.forget(id)
	case "start", "unpause":
		e.setStatus(b, sandbox.StatusRunning)
	case "die", "stop", "kill":
		if c, err := e.docker.Inspect(ctx, id); err == nil {
			e.setStatus(b, run.StatusOf(c.State))
			if action == "die" {
				e.sandboxDied(b, c.OOMKilled)
			}
		}
	case "pause":
		e.setStatus(b, sandbox.StatusPaused)
	case "oom":
		e.notify(id, "Sandbox killed for memory", fmt.Sprintf("A process in %s ran out of its %d MB and was killed.", b.Name, b.Spec.MemoryMB))
	}
}

func (e *Engine) setStatus(b *box, s sandbox.Status) {
	changed := false
	e.reg.Locked(func() {
		changed = b.Status != s
		b.Status = s
	})
	if s != sandbox.StatusRunning || changed {
		e.stats.Forget(b.ID) // a sandbox that stopped, or started again, has no figures yet
	}
	if s == sandbox.StatusStopped {
		e.execs.Forget(b.ID) // its agent is gone with it; the next start has a new one
		if e.ports.End(b.ID) {
			e.publish()
		}
		e.networkPart.EgressDown(b.ID)
	}
	if s == sandbox.StatusRunning && changed {
		e.networkPart.EgressSoon(netBox{e, b})
	}
	if changed {
		e.publish()
	}
}

// resync reconciles the engine's sandboxes with Docker's containers.
func (e *Engine) resync(ctx context.Context) {
	list, _, err := e.store.ListOwned(ctx, e.docker, e.cfg().managed(), e.cfg().engine)
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, c := range list {
		seen[c.ID] = true
		b, ok := e.reg.BoxOf(c.ID)
		if ok {
			e.setStatus(b, run.StatusOf(c.State))
		}
	}
	var vanished []string
	e.reg.Locked(func() {
		for id := range e.reg.BoxesLocked() {
			if !seen[id] {
				vanished = append(vanished, id)
			}
		}
	})
	for _, id := range vanished {
		e.forget(id)
	}
}

// reaper runs reapOnce every tick, and at once when asked (an ended
// session asks: registry.sessionEnded). It
// does not return until ctx is done.
func (e *Engine) reaper(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.reg.Reap():
		}
		e.reapOnce(ctx)
	}
}

// reapOnce removes every ephemeral sandbox that is idle past the idle TTL, or
// whose owning session ended more than the grace period ago. A session this
// engine never saw (one from before a restart) counts as ended at start-up.
func (e *Engine) reapOnce(ctx context.Context) {
	now := time.Now()
	grace, ttl := e.cfg().Sandbox.SessionGrace.Duration, e.cfg().Sandbox.IdleTTL.Duration
	expired := e.reg.Expired(now, e.start, grace, ttl)
	for _, b := range expired {
		err := e.docker.Remove(ctx, b.ID)
		if err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			e.log.Warn("reap ephemeral sandbox", "id", sandbox.ShortID(b.ID), "err", err)
			e.reg.Unpick(b)
			continue
		}
		e.log.Info("reaped ephemeral sandbox", "name", b.Name, "id", sandbox.ShortID(b.ID))
		e.forget(b.ID)
	}
}
