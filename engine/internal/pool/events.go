package pool

import (
	"context"
	"errors"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// watchImages follows Docker's image events: when an image is deleted or
// untagged, its spares are removed and the pool forgets it (a deleted image
// is never pooled again unless it is used again); when a reference comes to
// name another image (a rebuild, a pull), spares of the old one are
// replaced. It reconnects after errors and does not return until ctx is done.
func (p *Pool) watchImages(ctx context.Context, tick time.Duration) {
	for ctx.Err() == nil {
		events, errs := p.docker.ImageEvents(ctx)
		p.followImages(ctx, events)
		if err := <-errs; err != nil && ctx.Err() == nil {
			p.log.Debug("docker image events interrupted; reconnecting", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(tick):
			p.imagesChanged(ctx) // catch up on what happened meanwhile
		}
	}
}

// imageEventDelay coalesces image events: a build or an rmi sends several
// (untag, delete, tag), and the machine's other images send theirs too.
const imageEventDelay = 200 * time.Millisecond

// followImages checks the pool's images once after each run of image
// events, until the stream ends.
func (p *Pool) followImages(ctx context.Context, events <-chan runtime.ImageEvent) {
	var due <-chan time.Time
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.Action {
			case "delete", "untag", "tag", "pull", "load", "import":
				if due == nil {
					due = time.After(imageEventDelay)
				}
			}
		case <-due:
			due = nil
			p.imagesChanged(ctx)
		}
	}
}

// imagesChanged checks every image the pool knows against Docker: spares of
// an image gone or renamed to another id are removed.
func (p *Pool) imagesChanged(ctx context.Context) {
	p.mu.Lock()
	images := map[string]bool{}
	for img := range p.images {
		images[img] = true
	}
	p.mu.Unlock()
	changed := false
	for img := range images {
		current, err := p.docker.InspectImage(ctx, img)
		switch {
		case errors.Is(err, sandbox.ErrNotFound):
			changed = p.forgetImage(ctx, img) || changed
		case err == nil:
			stale := p.takeOut(func(c pooled) bool { return c.image == img && c.imageID != current.ID })
			p.RemoveAll(ctx, stale)
			changed = changed || len(stale) > 0
			p.mu.Lock()
			if s, ok := p.images[img]; ok && s.lastErr != "" {
				s.retryAt = time.Time{} // it is there now: try again at once
			}
			p.mu.Unlock()
		}
	}
	if changed {
		p.changed()
	}
	p.refill()
}

// forgetImage removes the spares of an image that no longer exists and
// forgets its use; a configured image stays configured (and its fills
// fail, backing off, until it is back).
func (p *Pool) forgetImage(ctx context.Context, image string) bool {
	gone := p.takeOut(func(c pooled) bool { return c.image == image })
	p.mu.Lock()
	if s, ok := p.images[image]; ok {
		s.uses = nil
		if !s.configured && s.filling == 0 {
			delete(p.images, image)
		}
	}
	p.mu.Unlock()
	p.RemoveAll(ctx, gone)
	return len(gone) > 0
}
