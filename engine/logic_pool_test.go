package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// pooled lists the daemon's containers that are in a pool now (named
// with the pool's prefix), by id.
func pooled(t *testing.T, rt *fakeruntime.Runtime) []string {
	t.Helper()
	list, err := rt.List(context.Background(), map[string]string{sandbox.LabelPool: ""}, true)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		if strings.HasPrefix(c.Name, pool.Prefix) {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestLogicPoolFillsAndHandsOut: the warm pool makes pool.size running
// containers, which are not sandboxes; a create takes one (renamed to the
// sandbox's name, limits changed in place, owned by the caller) and the
// pool makes another; the engine's close removes the spares and leaves
// the sandbox.
func TestLogicPoolFillsAndHandsOut(t *testing.T) {
	le := newLogicEngine(t, func(c *config.Config) { c.Pool.Size = 2 })
	ctx := context.Background()
	eventually(t, seconds, "the pool fills", func() bool {
		ready, size := le.PoolReady()
		return size == 2 && ready == 2
	})
	spares := pooled(t, le.rt)
	if len(spares) != 2 || !slices.Equal(spares, sortedCopy(le.warmPart.WarmPool().IDs())) {
		t.Fatalf("the daemon's pooled containers %v, the pool's %v: want the same 2", spares, le.warmPart.WarmPool().IDs())
	}
	for _, id := range spares {
		if got := containerState(le.rt, id); got != "running" {
			t.Errorf("spare %s is %q, want running", sandbox.ShortID(id), got)
		}
	}
	if list := mustList(t, le); len(list) != 0 {
		t.Errorf("spares listed as sandboxes: %v", infoIDs(list))
	}
	if _, err := le.Get(ctx, spares[0]); err == nil {
		t.Error("a spare resolves as a sandbox")
	}

	info := le.create(t, sandbox.CreateRequest{Name: "warm", MemoryMB: 512, CPUs: 1.5})
	if !slices.Contains(spares, info.ID) {
		t.Fatalf("create made %s instead of taking a spare of %v", sandbox.ShortID(info.ID), spares)
	}
	c, err := le.rt.Inspect(ctx, info.ID)
	if err != nil || c.Name != le.Engine.cfg().containerName("warm") {
		t.Errorf("the taken spare is named %q (%v), want %q", c.Name, err, le.Engine.cfg().containerName("warm"))
	}
	if mem, cpu, _ := le.rt.Limits(info.ID); mem != 512 || cpu != 1500 {
		t.Errorf("the taken spare's limits are %d MB and %d millicores, want 512 and 1500", mem, cpu)
	}
	if info.Name != "warm" || info.Owner != le.owner || info.Status != sandbox.StatusRunning {
		t.Errorf("the pooled sandbox %+v", info)
	}
	if got := le.run(t, "warm", sandbox.CommandRequest{Command: "echo ok"}); got.Stdout != "ok\n" {
		t.Errorf("a call in the pooled sandbox: %+v", got)
	}
	eventually(t, seconds, "the pool refills", func() bool {
		now := pooled(t, le.rt)
		return len(now) == 2 && !slices.Contains(now, info.ID)
	})
	if n := le.rt.Calls("Create"); n != 3 {
		t.Errorf("%d creates on the daemon, want 3 (two spares, one refill)", n)
	}

	daemon := le.rt.Connect() // the engine's own client closes with it
	le.close(t)
	if left := pooled(t, daemon); len(left) != 0 {
		t.Errorf("spares left after the engine's close: %v", left)
	}
	if got := containerState(daemon, info.ID); got != "running" {
		t.Errorf("the sandbox taken from the pool is %q after close, want it left running", got)
	}
}

// TestLogicPoolSkipsWhatItCannotServe: a create whose spec a spare cannot
// take (another network) is made on demand, and the spares stay.
func TestLogicPoolSkipsWhatItCannotServe(t *testing.T) {
	le := newLogicEngine(t, func(c *config.Config) { c.Pool.Size = 1; c.Sandbox.AllowNetwork = true })
	eventually(t, seconds, "the pool fills", func() bool { ready, size := le.PoolReady(); return size == 1 && ready == 1 })
	spares := pooled(t, le.rt)
	info := le.create(t, sandbox.CreateRequest{Network: sandbox.NetworkBridge})
	if slices.Contains(spares, info.ID) {
		t.Fatal("a bridged sandbox was taken from a pool of spares without network")
	}
	c, err := le.rt.Inspect(context.Background(), info.ID)
	if err != nil || !slices.Equal(c.Networks, []string{sandbox.NetworkBridge}) || c.Labels[sandbox.LabelPool] != "" {
		t.Errorf("the bridged sandbox: %+v, %v", c, err)
	}
	if now := pooled(t, le.rt); !slices.Equal(now, spares) {
		t.Errorf("the spares changed from %v to %v", spares, now)
	}
}
