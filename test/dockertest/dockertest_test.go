package dockertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

func TestLabelsAreUniquePerCall(t *testing.T) {
	a, b := dockertest.Labels(t), dockertest.Labels(t)
	if a[sandbox.LabelTest] == "" || a[sandbox.LabelTest] == b[sandbox.LabelTest] {
		t.Errorf("Labels gave %v and %v; want two distinct, non-empty test labels", a, b)
	}
}

// TestLabelsRemoveLeakedContainers checks the promise tests rely on: a
// container carrying a test's labels is gone once that test ends, even though
// the test never removed it.
func TestLabelsRemoveLeakedContainers(t *testing.T) {
	c := dockertest.Client(t)
	image := dockertest.Image(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	var leaked []string
	t.Run("leaky", func(t *testing.T) {
		labels := dockertest.Labels(t)
		for _, cmd := range [][]string{{"sleep", "infinity"}, {"true"}} {
			id, err := c.Create(ctx, runtime.CreateOptions{Image: image, Labels: labels, Cmd: cmd, MemoryMB: 64, MilliCPUs: 100, PidsLimit: 32})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			leaked = append(leaked, id)
		}
		if err := c.Start(ctx, leaked[0]); err != nil {
			t.Fatalf("Start: %v", err)
		}
	})
	if len(leaked) == 0 {
		t.Fatal("the leaky subtest created nothing")
	}
	for _, id := range leaked {
		if _, err := c.Inspect(ctx, id); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("container %s outlived its test: Inspect err = %v, want ErrNotFound", id, err)
		}
	}
}
