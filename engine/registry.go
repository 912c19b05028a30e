package engine

import (
	"context"
	"fmt"

	"github.com/sandtray/sandtray/engine/internal/registry"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The registry of sandboxes and sessions is engine/internal/registry's
// (Engine.reg); what is here is the engine's side of a call's sandbox: the
// saves of its state, forgetting it, and the session's default sandbox.

// box is the engine's record of one sandbox (registry.Box).
type box = registry.Box

// errClosing refuses work that arrives while the engine closes.
var errClosing = registry.ErrClosing

// release ends a call started by acquire and saves the last-use time.
func (e *Engine) release(b *box) {
	if st, live := e.reg.Done(b); live {
		e.store.SaveStateOrWarn(e.log, b.ID, st)
	}
}

// releaseSoon ends a call started by acquire, like release, but saves the
// last-use time later, coalesced, off the caller's path.
func (e *Engine) releaseSoon(b *box) {
	e.reg.Done(b)
	e.saves.Mark(b.ID)
}

// saveState writes a registered sandbox's state (see statedir.LastUse).
func (e *Engine) saveState(id string) {
	var st boxState
	live := false
	e.reg.Locked(func() {
		var b *box
		if b, live = e.reg.BoxesLocked()[id]; live {
			st = b.State
		}
	})
	if live {
		e.store.SaveStateOrWarn(e.log, id, st)
	}
}

// changeState applies change to a sandbox's state under the registry's lock and saves it at
// once, unless the sandbox is gone; what names the change in a failure's log.
func (e *Engine) changeState(b *box, what string, change func(*boxState)) {
	var st boxState
	live := false
	e.reg.Locked(func() {
		change(&b.State)
		st = b.State
		_, live = e.reg.BoxesLocked()[b.ID]
	})
	if !live {
		return
	}
	if err := e.store.Save(b.ID, st); err != nil {
		e.log.Error("save "+what, "sandbox", b.Name, "err", err)
	}
}

// forget drops a sandbox from memory and the state dir, and closes its
// port forwards.
func (e *Engine) forget(id string) {
	var image string
	e.reg.Locked(func() {
		if b, ok := e.reg.BoxesLocked()[id]; ok {
			image = b.Spec.Image
		}
	})
	defer e.snap.Drop(id, image) // engine/internal/snapshot
	e.kernels.Close(id)
	e.networkPart.EgressDown(id)
	e.reg.Drop(id)
	// Its host ports close now, not when the runtime's event of the
	// container's end arrives: whoever was told it is gone may reuse them.
	e.ports.RemoveBox(id)
	e.stats.Forget(id)
	e.store.Remove(id)
	e.publish()
}

// target acquires ref (see acquire), or the session's default sandbox when
// ref is "", creating that on first use with the image for language (see
// the top of this file).
func (e *Engine) target(ctx context.Context, owner sandbox.Owner, ref, language string) (*box, error) {
	if ref != "" {
		return e.reg.Acquire(ref)
	}
	for {
		id, wait, claim, known := e.reg.Default(owner.Session)
		switch {
		case id != "":
			return e.reg.Acquire(id) // the warm path
		case !known: // a session never started: nothing to remember it by
			return e.createDefault(ctx, owner, nil, language)
		case claim != nil:
			return e.createDefault(ctx, owner, claim, language)
		}
		select {
		case <-wait: // made (or failed) by a concurrent first call: look again
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for this session's sandbox to be created: %w", ctx.Err())
		}
	}
}

// createDefault creates the default sandbox of s (nil: of no session) and
// acquires it.
func (e *Engine) createDefault(ctx context.Context, owner sandbox.Owner, s *registry.Session, language string) (*box, error) {
	info, err := e.Create(ctx, owner, sandbox.CreateRequest{Language: language}, nil)
	if s != nil {
		made := ""
		if err == nil {
			made = info.ID
		}
		e.reg.Created(s, made)
	}
	if err != nil {
		return nil, err
	}
	return e.reg.Acquire(info.ID)
}
