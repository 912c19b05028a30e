package images

import (
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/internal/imagebuild"
)

// How long the default image's build takes yet, for the app's banner and
// the answer to a call that waits for it: from how far the build says it
// is. Its downloads are the first fifth of a build from Debian's mirror,
// installing the packages the rest; a step that counts nothing (unpacking,
// saving) keeps the fraction the build had reached.

// firstBuild is what a first build of the image takes on a quiet machine
// with no registry (from Debian's mirror): the estimate before a build has
// said how far it is.
const firstBuild = 8 * time.Minute

// fraction is how far a build at p is, 0 to 1; 0 when its step counts
// nothing.
func fraction(p imagebuild.Progress) float64 {
	switch {
	case p.Total <= 0:
		return 0
	case p.Bytes:
		return 0.2 * float64(p.Done) / float64(p.Total)
	}
	return 0.2 + 0.8*float64(p.Done)/float64(p.Total)
}

// estimateLeft is how long a build that is frac of the way after elapsed
// takes yet, at least a minute.
func estimateLeft(frac float64, elapsed time.Duration) time.Duration {
	if frac < 0.05 {
		return max(time.Minute, firstBuild-elapsed)
	}
	return max(time.Minute, time.Duration(float64(elapsed)*(1-frac)/frac))
}

// minutesText is a duration in whole minutes, as the estimate has it.
func minutesText(d time.Duration) string {
	n := int((d + 30*time.Second) / time.Minute)
	if n <= 1 {
		return "1 min"
	}
	return fmt.Sprintf("%d min", n)
}

// StepText is a build's step with how far it is: "Downloading 171
// packages: 64 of 128 MB".
func StepText(p imagebuild.Progress) string {
	switch {
	case p.Step == "":
		return "starting"
	case p.Total <= 0:
		return p.Step
	case p.Bytes:
		return fmt.Sprintf("%s: %d of %d MB", p.Step, p.Done>>20, p.Total>>20)
	}
	return fmt.Sprintf("%s: %d of %d packages", p.Step, p.Done, p.Total)
}

// BuildLeft estimates how long the default image's build under way takes
// yet (0 when none runs).
func (im *Images) BuildLeft() time.Duration {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.cur == nil {
		return 0
	}
	return estimateLeft(im.cur.frac, time.Since(im.cur.started))
}

// BuildStarted is when the default image's build under way began (zero
// when none runs).
func (im *Images) BuildStarted() time.Time {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.cur == nil {
		return time.Time{}
	}
	return im.cur.started
}
