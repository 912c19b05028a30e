package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// vanishingImage lists, beside the daemon's images, one that is gone by
// the time it is inspected: a fork's image removed with its last fork
// between the list and the look.
type vanishingImage struct{ *fakeruntime.Runtime }

func (v vanishingImage) ImagesLabeled(ctx context.Context, labels map[string]string) ([]runtime.LabeledImage, error) {
	list, err := v.Runtime.ImagesLabeled(ctx, labels)
	return append(list, runtime.LabeledImage{ID: "sha256:" + strings.Repeat("0", 64), Labels: labels}), err
}

// TestLogicCommittedImagesGoneSinceListed: the committed images' count
// (limits.max_committed_mb, which every commit and fork asks) skips an
// image removed since it was listed, instead of failing the fork or the
// commit that asked.
func TestLogicCommittedImagesGoneSinceListed(t *testing.T) {
	cfg := logicConfig(t)
	e, err := New(context.Background(), cfg, Options{Runtime: vanishingImage{newFakeDaemon().Connect()},
		Labels: map[string]string{sandbox.LabelTest: t.Name()}, Tick: logicTick, CgroupRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Close(ctx)
	}()
	if n, err := e.snap.CommittedBytes(context.Background()); err != nil || n != 0 {
		t.Errorf("CommittedBytes = %d, %v; want 0 for an image that is gone", n, err)
	}
	if err := e.snap.Committed().Check(context.Background()); err != nil {
		t.Errorf("the budget's check: %v", err)
	}
}
