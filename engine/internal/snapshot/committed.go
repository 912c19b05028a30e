package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The images an engine commits, commit_sandbox's and its forks', each add
// layers to the daemon's disk; limits.max_committed_mb bounds them
// together (F59). An image's share is its size less the size of the image
// it was made on, which it names (sandbox.LabelCommittedOn), so that an
// image stays counted while a later one stands on it, even untagged. A
// fork's image also counts against the fork's own limits.disk_mb: what it
// adds over the first image below it that is not a fork's is what the
// fork holds from the start (see Inherited).

// ownImage reports whether img is one of engine's commits or fork images
// (a snapshot is not: max_snapshot_mb counts those).
func ownImage(img runtime.Image, engine string) bool {
	return img.Labels[sandbox.LabelCommittedBy] == engine || forkImage(img, engine)
}

// forkImage reports whether img is one of engine's fork images.
func forkImage(img runtime.Image, engine string) bool {
	return img.Labels[LabelEngine] == engine && img.Labels[LabelID] == ""
}

// imageSizes inspects images once each for one count.
type imageSizes struct {
	rt   Runtime
	seen map[string]runtime.Image
}

func (s *imageSizes) get(ctx context.Context, ref string) (runtime.Image, int64, error) {
	img, ok := s.seen[ref]
	if !ok {
		var err error
		if img, err = s.rt.InspectImage(ctx, ref); err != nil {
			return img, 0, err
		}
		s.seen[ref], s.seen[img.ID] = img, img
	}
	size, err := s.rt.ImageSize(ctx, img.ID)
	return img, size, err
}

// CommittedBytes is the disk the engine's commits and fork images take:
// each one's size less its parent's, for every image of the engine's that
// a tagged one stands on.
func (s *Store) CommittedBytes(ctx context.Context) (int64, error) {
	engine := s.config().Engine
	var tops []runtime.LabeledImage
	for _, sel := range []map[string]string{{sandbox.LabelCommittedBy: engine}, {LabelEngine: engine}} {
		imgs, err := s.rt.ImagesLabeled(ctx, sel)
		if err != nil {
			return 0, err
		}
		tops = append(tops, imgs...)
	}
	sizes := &imageSizes{rt: s.rt, seen: map[string]runtime.Image{}}
	counted := map[string]bool{}
	var total int64
	for _, top := range tops {
		for id := top.ID; id != "" && !counted[id]; {
			img, size, err := sizes.get(ctx, id)
			if errors.Is(err, sandbox.ErrNotFound) {
				break // removed since it was listed (a fork's image going with its last fork): it takes nothing now
			}
			if err != nil {
				return 0, fmt.Errorf("size the image %s: %w", sandbox.ShortID(strings.TrimPrefix(id, "sha256:")), err)
			}
			counted[id], counted[img.ID] = true, true
			if !ownImage(img, engine) {
				break
			}
			parent := img.Labels[sandbox.LabelCommittedOn]
			if parent == "" {
				break // an older Sandtray's: its share is unknown
			}
			if _, under, err := sizes.get(ctx, parent); err == nil && size > under {
				total += size - under
			}
			id = parent
		}
	}
	return total, nil
}

// Inherited is what fork image ref adds over the first image below it
// that is not one of the engine's fork images (the image its first
// original was created from): the files its sandbox starts with.
func (s *Store) Inherited(ctx context.Context, ref string) (int64, error) {
	engine := s.config().Engine
	sizes := &imageSizes{rt: s.rt, seen: map[string]runtime.Image{}}
	img, top, err := sizes.get(ctx, ref)
	if err != nil {
		return 0, err
	}
	for depth := 0; forkImage(img, engine) && img.Labels[sandbox.LabelCommittedOn] != ""; depth++ {
		if depth > 1000 {
			return 0, fmt.Errorf("image %s: its forks go on beyond 1000 images", ref)
		}
		var size int64
		if img, size, err = sizes.get(ctx, img.Labels[sandbox.LabelCommittedOn]); err != nil {
			return 0, err
		}
		if !forkImage(img, engine) {
			return max(top-size, 0), nil
		}
	}
	return 0, nil
}

// Committed is limits.max_committed_mb as capture checks it (see
// capture.ImageBudget), and a fork too: a commit is refused when the
// images already fill the budget, and the image it made is taken back when
// it takes them past.
func (s *Store) Committed() ImageBudget { return ImageBudget{s} }

// ImageBudget is the budget of the engine's committed and fork images.
type ImageBudget struct{ s *Store }

// Check refuses when the engine's committed and fork images fill the budget.
func (b ImageBudget) Check(ctx context.Context) error {
	used, err := b.s.CommittedBytes(ctx)
	if err != nil {
		return err
	}
	if limit := b.s.config().CommittedMB << 20; used >= limit {
		return fmt.Errorf("the images of Sandtray's commits and forks take %d MB, the most limits.max_committed_mb (%d MB) allows; "+
			"ask the user to remove committed images they no longer need (docker rmi), delete forks you no longer need with delete_sandbox, "+
			"or ask the user to raise limits.max_committed_mb: %w", used>>20, limit>>20, sandbox.ErrTooLarge)
	}
	return nil
}

// Admit refuses image id, just made, when the engine's committed and fork
// images now take more than the budget; the caller removes it.
func (b ImageBudget) Admit(ctx context.Context, id string) error {
	used, err := b.s.CommittedBytes(ctx)
	if err != nil {
		return err
	}
	limit := b.s.config().CommittedMB << 20
	if used <= limit {
		return nil
	}
	sizes := &imageSizes{rt: b.s.rt, seen: map[string]runtime.Image{}}
	var own int64
	if img, size, err := sizes.get(ctx, id); err == nil {
		if _, under, err := sizes.get(ctx, img.Labels[sandbox.LabelCommittedOn]); err == nil {
			own = max(size-under, 0)
		}
	}
	return fmt.Errorf("the image would take the images of Sandtray's commits and forks to %d MB, past limits.max_committed_mb (%d MB): it adds %d MB; "+
		"delete files in the sandbox you do not need in the image (diff_sandbox lists what it changed), delete forks you no longer need with delete_sandbox, "+
		"or ask the user to remove committed images (docker rmi) or to raise limits.max_committed_mb: %w", used>>20, limit>>20, own>>20, sandbox.ErrTooLarge)
}
