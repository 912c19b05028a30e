package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// DeleteSnapshot removes one of a sandbox's snapshots.
func (e *Engine) DeleteSnapshot(ctx context.Context, owner sandbox.Owner, ref, snap string) error {
	b, err := e.acquire(ref)
	if err != nil {
		return err
	}
	defer e.release(b)
	s, err := e.findSnapshot(ctx, b, snap)
	if err != nil {
		return err
	}
	name := e.cfg().snapshotRef(b.id, s.ID)
	img, ierr := e.docker.InspectImage(ctx, name)
	err = e.docker.RemoveImage(ctx, name)
	if ierr == nil && err == nil {
		go e.removeUntaggedSoon(img.ID) // see dropImage
	}
	if err == nil {
		err = os.RemoveAll(e.cfg().snapshotDir(b.id, s.ID))
		e.snapshotsChanged(b)
	}
	boxTarget{e, b}.log("delete_snapshot", owner)(s.ID, err, "")
	return err
}

// snapshotsChanged tells the watchers (the app's Snapshots tab) that b's
// snapshots changed, as soon as they did: its SnapshotsChanged moves on.
func (e *Engine) snapshotsChanged(b *box) {
	e.mu.Lock()
	b.snaps++
	e.mu.Unlock()
	e.publish()
}

// cleanupCtx bounds the removal of what the engine made and no longer
// needs. It outlives the engine's closing: a fork that an exit cuts short
// removes its images while Close waits for it (F70).
func (e *Engine) cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(e.base), 30*time.Second)
}

// removeImage removes an image of the engine's own, logging a failure.
func (e *Engine) removeImage(ref string) {
	ctx, cancel := e.cleanupCtx()
	defer cancel()
	err := e.docker.RemoveImage(ctx, ref)
	if err != nil {
		e.log.Warn("remove image", "image", ref, "err", err)
	}
}

// removeUntagged removes image id once nothing names or uses it.
func (e *Engine) removeUntagged(id string) {
	ctx, cancel := e.cleanupCtx()
	defer cancel()
	_, err := e.docker.RemoveUntagged(ctx, id)
	if err != nil {
		e.log.Warn("remove image", "image", id, "err", err)
	}
}

// dropImage removes tag ref of an image of the engine's own and, when
// that was its last name, the image. Docker sometimes still counts a
// container just removed (a fork, a restore's helper) as using it, and the
// tag's removal then leaves it untagged: removeUntaggedSoon tries again
// for a few seconds, off the caller's path, and the next start-up's sweep
// removes what is left.
func (e *Engine) dropImage(ref string) {
	ctx, cancel := e.cleanupCtx()
	img, err := e.docker.InspectImage(ctx, ref)
	cancel()
	e.removeImage(ref)
	if err == nil {
		go e.removeUntaggedSoon(img.ID)
	}
}

// removeUntaggedSoon tries removeUntagged for a few seconds, until the
// image is gone.
func (e *Engine) removeUntaggedSoon(id string) {
	for wait := 50 * time.Millisecond; wait < 5*time.Second; wait *= 2 {
		ctx, cancel := context.WithTimeout(e.base, 30*time.Second)
		_, err := e.docker.InspectImage(ctx, id)
		if err == nil {
			_, err = e.docker.RemoveUntagged(ctx, id)
		}
		cancel()
		if err != nil { // gone (not found), or Docker cannot be asked
			return
		}
		select {
		case <-e.base.Done():
			return
		case <-time.After(wait):
		}
	}
}

// dropSnapshots removes what a removed sandbox leaves of snapshots and
// forks: its snapshots' images and folder, and the image it was forked
// from (its own tag of it: the image goes with the last fork).
func (e *Engine) dropSnapshots(id, image string) {
	if strings.HasPrefix(image, forkRepo+e.cfg().engine[:nameTagLen]+":") {
		e.dropImage(image) // the image goes with the last fork's tag
	}
	ctx, cancel := e.cleanupCtx()
	list, err := e.snapshotsOf(ctx, id)
	cancel()
	if err != nil {
		e.log.Warn("list the snapshots of a removed sandbox", "id", sandbox.ShortID(id), "err", err)
	}
	for _, s := range list {
		e.dropImage(e.cfg().snapshotRef(id, s.ID))
	}
	if e.cfg().StateDir != "" {
		os.RemoveAll(filepath.Join(e.cfg().StateDir, "snapshots", id))
	}
}

// sweepSnapshots removes, at start-up, the snapshots and fork images of
// this engine whose sandbox is gone (removed while the engine was not
// running, or by a crash between the container and its snapshots).
func (e *Engine) sweepSnapshots(ctx context.Context) {
	imgs, err := e.docker.ImagesLabeled(ctx, map[string]string{labelSnapEngine: e.cfg().engine})
	if err != nil {
		e.log.Warn("list snapshots", "err", err)
		return
	}
	e.mu.Lock()
	live := map[string]bool{}
	for id, b := range e.boxes {
		live[id] = true
		live[b.spec.Image] = true
	}
	e.mu.Unlock()
	for _, img := range imgs {
		if !slices.ContainsFunc(img.RepoTags, func(t string) bool { return strings.HasPrefix(t, "sandtray-") }) {
			e.removeUntagged(img.ID) // a fork image whose tags went, left by a crash
			continue
		}
		for _, tag := range img.RepoTags {
			id := img.Labels[labelSnapSandbox]
			switch {
			case strings.HasPrefix(tag, snapshotRepo+e.cfg().engine[:nameTagLen]+"-") && !live[id]:
				e.removeImage(tag)
				if validID.MatchString(id) {
					os.RemoveAll(filepath.Join(e.cfg().StateDir, "snapshots", id))
				}
			case strings.HasPrefix(tag, forkRepo+e.cfg().engine[:nameTagLen]+":") && !live[tag]:
				e.removeImage(tag)
			}
		}
	}
}
