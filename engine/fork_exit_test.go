package engine

import (
	"context"
	"errors"
	"github.com/sandtray/sandtray/engine/internal/snapshot"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// heldTag holds the first tag of a fork's image until let is closed, and
// says when it got there.
type heldTag struct {
	runtime.Full
	reached, let chan struct{}
	once         *sync.Once
}

func (h heldTag) TagImage(ctx context.Context, src, ref string) error {
	if strings.HasPrefix(src, snapshot.ForkRepo) {
		h.once.Do(func() { close(h.reached); <-h.let })
	}
	return h.Full.TagImage(ctx, src, ref)
}

// TestForkCutShortByTheExitLeavesNoTag (F70): the engine exits (as
// `sandtray serve` does: ephemeral sandboxes removed, then Close) while a
// fork_sandbox has committed its image and not yet made its forks. No
// fork, and no sandtray-fork tag of this engine's, outlives the exit. And
// a fork whose container was removed while the engine was down loses its
// tag at the next start.
func TestForkCutShortByTheExitLeavesNoTag(t *testing.T) {
	t.Parallel()
	reached, let := make(chan struct{}), make(chan struct{})
	te := newTestEngineOn(t, func(d runtime.Full) runtime.Full { return heldTag{d, reached, let, &sync.Once{}} })
	cli := dockertest.Client(t) // the engine's goes with its Close
	ctx := context.Background()
	engineTag := te.Engine.cfg().engine
	forkTags := func() []string {
		t.Helper()
		imgs, err := cli.ImagesLabeled(ctx, map[string]string{snapshot.LabelEngine: engineTag})
		if err != nil {
			t.Fatal(err)
		}
		var tags []string
		for _, img := range imgs {
			for _, tag := range img.RepoTags {
				if strings.HasPrefix(tag, snapshot.ForkRepo) {
					tags = append(tags, tag)
				}
			}
		}
		return tags
	}
	t.Cleanup(func() {
		imgs, _ := cli.ImagesLabeled(context.Background(), map[string]string{snapshot.LabelEngine: engineTag})
		for _, img := range imgs {
			cli.RemoveImage(context.Background(), img.ID)
		}
	})
	parent := te.create(t, sandbox.CreateRequest{Name: "parent", Persistent: true})
	forked := make(chan error, 1)
	go func() {
		_, err := te.Fork(ctx, te.owner, parent.ID, sandbox.ForkRequest{Count: 2})
		forked <- err
	}()
	<-reached
	closed := make(chan error, 1)
	go func() {
		err := te.RemoveEphemeral(ctx)
		closed <- errors.Join(err, te.Close(ctx))
	}()
	eventually(t, 30*time.Second, "the engine to begin its exit", func() bool {
		return te.reg.Closing()
	})
	close(let)
	if err := <-closed; err != nil {
		t.Errorf("exit: %v", err)
	}
	t.Logf("the fork cut short by the exit: %v", <-forked)
	if tags := forkTags(); len(tags) > 0 {
		t.Errorf("after the engine exited, its fork tags %v remain", tags)
	}
	list, err := cli.List(ctx, te.labels, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != parent.ID {
		t.Errorf("after the engine exited: containers %+v, want only the persistent parent", list)
	}

	// A fork whose container goes while no engine runs: the next start
	// removes its tag.
	e2, err := newEngine(ctx, te.cfg, cli, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	forks, err := e2.Fork(ctx, te.owner, parent.ID, sandbox.ForkRequest{})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := e2.Get(ctx, forks[0].SandboxID)
	if err != nil {
		t.Fatal(err)
	}
	e2.stopLoops() // the engine dies
	if err := cli.Remove(ctx, forks[0].SandboxID); err != nil {
		t.Fatal(err)
	}
	e3, err := newEngine(ctx, te.cfg, cli, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e3.stopLoops()
	if tags := forkTags(); slices.Contains(tags, gone.Image) {
		t.Errorf("after a start, the tag %s of a fork removed while no engine ran remains", gone.Image)
	}
}
