package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// eventLoop follows Docker's container events for managed containers, so a
// sandbox stopped or removed behind the engine's back shows at once. It
// reconnects after errors and does not return until ctx is done.
func (e *Engine) eventLoop(ctx context.Context, tick time.Duration) {
	for ctx.Err() == nil {
		events, errs := e.docker.Events(ctx, e.scope())
		for ev := range events {
			e.onEvent(ctx, ev.ContainerID, ev.Action)
		}
		if err := <-errs; err != nil && ctx.Err() == nil {
			e.log.Warn("docker events interrupted; reconnecting", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(tick):
			if e.checkDocker(ctx) {
				e.resync(ctx) // catch up on what happened while disconnected
			}
		}
	}
}

func (e *Engine) onEvent(ctx context.Context, id, action string) {
	e.mu.Lock()
	b, ok := e.boxes[id]
	e.mu.Unlock()
	if !ok {
		return
	}
	switch action {
	case "destroy":
		e.forget(id)
	case "start", "unpause":
		e.setStatus(b, sandbox.StatusRunning)
	case "die", "stop", "kill":
		if c, err := e.docker.Inspect(ctx, id); err == nil {
			e.setStatus(b, statusOf(c.State))
			if action == "die" {
				e.sandboxDied(b, c.OOMKilled)
			}
		}
	case "pause":
		e.setStatus(b, sandbox.StatusPaused)
	case "oom":
		e.notify(id, "Sandbox killed for memory", fmt.Sprintf("A process in %s ran out of its %d MB and was killed.", b.name, b.spec.MemoryMB))
	}
}

func (e *Engine) setStatus(b *box, s sandbox.Status) {
	e.mu.Lock()
	changed := b.status != s
	b.status = s
	if s != sandbox.StatusRunning {
		b.stats = sandbox.Stats{}
	}
	e.mu.Unlock()
	if changed {
		e.publish()
	}
}

// resync reconciles the engine's sandboxes with Docker's containers.
func (e *Engine) resync(ctx context.Context) {
	list, err := e.listOwned(ctx)
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, c := range list {
		seen[c.ID] = true
		e.mu.Lock()
		b, ok := e.boxes[c.ID]
		e.mu.Unlock()
		if ok {
			e.setStatus(b, statusOf(c.State))
		}
	}
	e.mu.Lock()
	var vanished []string
	for id := range e.boxes {
		if !seen[id] {
			vanished = append(vanished, id)
		}
	}
	e.mu.Unlock()
	for _, id := range vanished {
		e.forget(id)
	}
}

// every calls fn each tick until ctx is done; it does not return before then.
func every(ctx context.Context, tick time.Duration, fn func(context.Context)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// sampleStats samples CPU, memory and pids of the running sandboxes.
func (e *Engine) sampleStats(ctx context.Context) {
	e.mu.Lock()
	var running []*box
	for _, b := range e.boxes {
		if b.status == sandbox.StatusRunning {
			running = append(running, b)
		}
	}
	e.mu.Unlock()
	if len(running) == 0 {
		return
	}
	for _, b := range running {
		s, err := e.docker.Stats(ctx, b.id)
		if err != nil {
			continue
		}
		e.mu.Lock()
		b.stats = sandbox.Stats{
			CPUPercent:  sandbox.CPUPercent(b.prev.CPUTotal, s.CPUTotal, b.prev.SystemCPU, s.SystemCPU, s.OnlineCPUs),
			MemoryBytes: sandbox.MemoryUsage(s.MemoryUsage, s.MemoryStats),
			MemoryLimit: s.MemoryLimit,
			Pids:        s.Pids,
		}
		if b.prev.SystemCPU == 0 {
			b.stats.CPUPercent = 0 // one sample gives no rate yet
		}
		b.prev = s
		e.mu.Unlock()
	}
	e.publish()
}

// reapOnce removes every ephemeral sandbox that is idle past the idle TTL, or
// whose owning session ended more than the grace period ago. A session this
// engine never saw (one from before a restart) counts as ended at start-up.
func (e *Engine) reapOnce(ctx context.Context) {
	now := time.Now()
	grace, ttl := e.cfg.Sandbox.SessionGrace.Duration, e.cfg.Sandbox.IdleTTL.Duration
	e.mu.Lock()
	var expired []*box
	for _, b := range e.boxes {
		if b.state.Persistent || b.busy > 0 {
			continue
		}
		ended := e.start
		if s, ok := e.sessions[b.state.Owner.Session]; ok {
			ended = s.ended
		}
		sessionOver := !ended.IsZero() && now.Sub(ended) >= grace
		if sessionOver || now.Sub(b.state.LastUsed) >= ttl {
			expired = append(expired, b)
		}
	}
	e.mu.Unlock()
	for _, b := range expired {
		err := e.docker.Remove(ctx, b.id)
		if err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			e.log.Warn("reap ephemeral sandbox", "id", short(b.id), "err", err)
			continue
		}
		e.log.Info("reaped ephemeral sandbox", "name", b.name, "id", short(b.id))
		e.forget(b.id)
	}
}
