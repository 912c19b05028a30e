package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// poolLeft lists the containers still named as in a pool under the test's labels.
func (te *testEngine) poolLeft(t *testing.T) []string {
	t.Helper()
	labels := te.Engine.cfg().scope()
	labels[sandbox.LabelPool] = ""
	list, err := te.docker.List(context.Background(), labels, true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list {
		if strings.HasPrefix(c.Name, pool.Prefix) {
			names = append(names, c.Name)
		}
	}
	return names
}

// TestPoolEmptyAfterClose: Close removes every pooled container, even with a
// refill under way, and leaves the sandboxes alone.
func TestPoolEmptyAfterClose(t *testing.T) {
	te := newPoolEngine(t, 2)
	ctx := context.Background()
	kept := te.create(t, sandbox.CreateRequest{Persistent: true}) // starts a refill
	if err := te.Close(ctx); err != nil {
		t.Fatal(err)
	}
	te.docker = dockertest.Client(t) // Close closed the engine's client
	if left := te.poolLeft(t); len(left) != 0 {
		t.Errorf("pooled containers outlived Close: %v", left)
	}
	if _, err := te.docker.Inspect(ctx, kept.ID); err != nil {
		t.Errorf("Close removed a sandbox taken from the pool: %v", err)
	}
}

// TestPoolLeftoversRemovedAtStart: after a crash, the next engine removes the
// pooled containers it finds and adopts the one that was handed out, with the
// name, creation time and language it was handed out with.
func TestPoolLeftoversRemovedAtStart(t *testing.T) {
	te := newPoolEngine(t, 2)
	ctx := context.Background()
	kept := te.create(t, sandbox.CreateRequest{Name: "kept", Persistent: true, Language: "python"})
	te.waitPoolFull(t)
	leftovers := te.readyIDs()
	te.stopLoops() // the process dies: nothing is cleaned up

	cfg := te.cfg
	cfg.Pool.Size = 0
	e2, err := newEngine(ctx, cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.stopLoops()
	list, _ := e2.List(ctx)
	if len(list) != 1 || list[0].ID != kept.ID || list[0].Name != "kept" || !list[0].Persistent ||
		!list[0].CreatedAt.Equal(kept.CreatedAt) || list[0].Spec.Language != "python" {
		t.Fatalf("after restart: %+v, want only %+v", list, kept)
	}
	for id := range leftovers {
		if _, err := te.docker.Inspect(ctx, id); err == nil {
			t.Errorf("leftover pooled container %s survived the restart", sandbox.ShortID(id))
		}
	}
	if left := te.poolLeft(t); len(left) != 0 {
		t.Errorf("pooled containers left after restart: %v", left)
	}
}
