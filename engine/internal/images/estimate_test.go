package images

import (
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/internal/imagebuild"
)

// TestBuildEstimates: the time a build takes yet follows how far it says
// it is; a step that counts nothing (unpacking after the downloads) keeps
// the fraction reached, instead of starting the estimate over.
func TestBuildEstimates(t *testing.T) {
	steps := []struct {
		p       imagebuild.Progress
		elapsed time.Duration
		want    string
	}{
		{imagebuild.Progress{Step: "Reading bookworm's package index"}, 10 * time.Second, "8 min"},
		{imagebuild.Progress{Step: "Downloading 171 packages", Done: 50, Total: 100, Bytes: true}, time.Minute, "9 min"},
		{imagebuild.Progress{Step: "Downloading 171 packages", Done: 100, Total: 100, Bytes: true}, 2 * time.Minute, "8 min"},
		{imagebuild.Progress{Step: "Unpacking Debian's required packages"}, 2*time.Minute + 30*time.Second, "10 min"},
		{imagebuild.Progress{Step: "Installing", Done: 100, Total: 200}, 6 * time.Minute, "4 min"},
		{imagebuild.Progress{Step: "Installing", Done: 199, Total: 200}, 20 * time.Minute, "1 min"},
	}
	frac := 0.0
	for _, s := range steps {
		frac = max(frac, fraction(s.p))
		if got := minutesText(estimateLeft(frac, s.elapsed)); got != s.want {
			t.Errorf("at %+v after %v: %s left, want %s", s.p, s.elapsed, got, s.want)
		}
	}
	if got := StepText(imagebuild.Progress{Step: "Downloading 171 packages", Done: 64 << 20, Total: 128 << 20, Bytes: true}); got != "Downloading 171 packages: 64 of 128 MB" {
		t.Errorf("StepText = %q", got)
	}
}
