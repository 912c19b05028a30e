package docker_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/dockertest"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// testNetwork is a network name of this test's own (never Sandtray's bridge,
// which other engines on the daemon use), whose networks are removed when
// the test ends.
func testNetwork(t *testing.T, c *docker.Client) string {
	t.Helper()
	name := "sandtray-test-net-" + sandbox.RandomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ids, _ := c.NetworkIDs(ctx, name)
		for _, id := range ids {
			if err := c.RemoveNetwork(ctx, id); err != nil {
				t.Errorf("cleanup: remove network %s: %v", id, err)
			}
		}
	})
	return name
}

// TestTwinNetworksResolved (F37): two networks of the bridge's name, as two
// engines starting their first bridged sandbox at once leave them on a
// Docker that allows it (before API 1.44), made every container that names
// it fail as ambiguous; the next ensure keeps the older and removes the
// other, and never the one a sandbox is on.
func TestTwinNetworksResolved(t *testing.T) {
	ctx := testCtx(t)
	c := dockertest.Client(t)
	name := testNetwork(t, c)
	older, err := c.CreateTwinNetwork(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTwinNetwork(ctx, name); err != nil {
		t.Fatal(err)
	}
	if ids, _ := c.NetworkIDs(ctx, name); len(ids) != 2 {
		t.Skipf("this daemon refuses a second network of one name (%d made): nothing to resolve", len(ids))
	}
	if err := c.EnsureNetwork(ctx, name); err != nil {
		t.Fatalf("ensure with twins: %v", err)
	}
	if ids, _ := c.NetworkIDs(ctx, name); !slices.Equal(ids, []string{older}) {
		t.Errorf("after the ensure: %v, want only the older %s", ids, older)
	}

	// The network a sandbox is on stays, and so does the sandbox on it.
	o := createOptions(t)
	o.Network = name
	id, err := c.Create(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTwinNetwork(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureNetwork(ctx, name); err != nil {
		t.Fatalf("ensure with twins, one in use: %v", err)
	}
	if ids, _ := c.NetworkIDs(ctx, name); !slices.Equal(ids, []string{older}) {
		t.Errorf("after the ensure: %v, want only %s, which a sandbox is on", ids, older)
	}
	if got, err := c.Inspect(ctx, id); err != nil || got.State != "running" || !slices.Contains(got.Networks, name) {
		t.Errorf("the sandbox on the network: %+v, %v; want it running on %s", got, err, name)
	}
	if err := c.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// TestEnginesRaceForTheNetwork (F37): engines (each its own client) that
// make the network at the same moment end with one network and no error.
func TestEnginesRaceForTheNetwork(t *testing.T) {
	ctx := testCtx(t)
	const engines = 4
	clients := make([]*docker.Client, engines)
	for i := range clients {
		clients[i] = dockertest.Client(t)
	}
	for range 3 {
		name := testNetwork(t, clients[0])
		errs := make([]error, engines)
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Go(func() { errs[i] = c.EnsureNetwork(ctx, name) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("engine %d: %v", i, err)
			}
		}
		if ids, _ := clients[0].NetworkIDs(ctx, name); len(ids) != 1 {
			t.Errorf("after the race: %d networks named %s, want 1", len(ids), name)
		}
	}
}
