package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Delete removes b's snapshot snap (found with Find): its image and its
// folder.
func (s *Store) Delete(ctx context.Context, b Box, snap string) error {
	name := s.Ref(b.ID, snap)
	img, ierr := s.rt.InspectImage(ctx, name)
	err := s.rt.RemoveImage(ctx, name)
	if ierr == nil && err == nil {
		go s.removeUntaggedSoon(img.ID) // see DropImage
	}
	if err != nil {
		return err
	}
	return os.RemoveAll(s.Dir(b.ID, snap))
}

// ForkImage is the name of a fork's image, hex its random part: the image
// each fork's own tag (ForkImage-1, -2, …) is made from.
func (s *Store) ForkImage(hex string) string {
	return ForkRepo + s.config().Tag + ":" + hex
}

// Tag gives image src the name ref too (a fork's own tag of its image).
func (s *Store) Tag(ctx context.Context, src, ref string) error {
	return s.rt.TagImage(ctx, src, ref)
}

// cleanupCtx bounds the removal of what the engine made and no longer
// needs. It outlives the engine's closing: a fork that an exit cuts short
// removes its images while Close waits for it (F70).
func (s *Store) cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(s.base), 30*time.Second)
}

// RemoveImage removes an image of the engine's own, logging a failure.
func (s *Store) RemoveImage(ref string) {
	ctx, cancel := s.cleanupCtx()
	defer cancel()
	if err := s.rt.RemoveImage(ctx, ref); err != nil {
		s.log.Warn("remove image", "image", ref, "err", err)
	}
}

// removeUntagged removes image id once nothing names or uses it.
func (s *Store) removeUntagged(id string) {
	ctx, cancel := s.cleanupCtx()
	defer cancel()
	if _, err := s.rt.RemoveUntagged(ctx, id); err != nil {
		s.log.Warn("remove image", "image", id, "err", err)
	}
}

// DropImage removes tag ref of an image of the engine's own and, when
// that was its last name, the image. Docker sometimes still counts a
// container just removed (a fork, a restore's helper) as using it, and the
// tag's removal then leaves it untagged: removeUntaggedSoon tries again
// for a few seconds, off the caller's path, and the next start-up's sweep
// removes what is left.
func (s *Store) DropImage(ref string) {
	ctx, cancel := s.cleanupCtx()
	img, err := s.rt.InspectImage(ctx, ref)
	cancel()
	s.RemoveImage(ref)
	if err == nil {
		go s.removeUntaggedSoon(img.ID)
	}
}

// removeUntaggedSoon tries removeUntagged for a few seconds, until the
// image is gone.
func (s *Store) removeUntaggedSoon(id string) {
	for wait := 50 * time.Millisecond; wait < 5*time.Second; wait *= 2 {
		ctx, cancel := context.WithTimeout(s.base, 30*time.Second)
		_, err := s.rt.InspectImage(ctx, id)
		if err == nil {
			_, err = s.rt.RemoveUntagged(ctx, id)
		}
		cancel()
		if err != nil { // gone (not found), or the runtime cannot be asked
			return
		}
		select {
		case <-s.base.Done():
			return
		case <-time.After(wait):
		}
	}
}

// Drop removes what a removed sandbox (container id, made from image)
// leaves of snapshots and forks: its snapshots' images and folder, and the
// image it was forked from (its own tag of it: the image goes with the
// last fork).
func (s *Store) Drop(id, image string) {
	c := s.config()
	if strings.HasPrefix(image, ForkRepo+c.Tag+":") {
		s.DropImage(image) // the image goes with the last fork's tag
	}
	ctx, cancel := s.cleanupCtx()
	list, err := s.List(ctx, id)
	cancel()
	if err != nil {
		s.log.Warn("list the snapshots of a removed sandbox", "id", sandbox.ShortID(id), "err", err)
	}
	for _, snap := range list {
		s.DropImage(s.Ref(id, snap.ID))
	}
	if c.StateDir != "" {
		os.RemoveAll(filepath.Join(c.StateDir, "snapshots", id))
	}
}

// Sweep removes, at start-up, the snapshots and fork images of this engine
// whose sandbox is gone (removed while the engine was not running, or by a
// crash between the container and its snapshots). live holds the
// container ids of the sandboxes there are, and the images they run.
func (s *Store) Sweep(ctx context.Context, live map[string]bool) {
	c := s.config()
	imgs, err := s.rt.ImagesLabeled(ctx, map[string]string{LabelEngine: c.Engine})
	if err != nil {
		s.log.Warn("list snapshots", "err", err)
		return
	}
	for _, img := range imgs {
		if !slices.ContainsFunc(img.RepoTags, func(t string) bool { return strings.HasPrefix(t, "sandtray-") }) {
			s.removeUntagged(img.ID) // a fork image whose tags went, left by a crash
			continue
		}
		for _, tag := range img.RepoTags {
			id := img.Labels[LabelSandbox]
			switch {
			case strings.HasPrefix(tag, Repo+c.Tag+"-") && !live[id]:
				s.RemoveImage(tag)
				if validID.MatchString(id) {
					os.RemoveAll(filepath.Join(c.StateDir, "snapshots", id))
				}
			case strings.HasPrefix(tag, ForkRepo+c.Tag+":") && !live[tag]:
				s.RemoveImage(tag)
			}
		}
	}
}
