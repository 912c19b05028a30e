package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// newPoolEngine is a test engine with a warm pool of size, already full.
func newPoolEngine(t *testing.T, size int, configure ...func(*config.Config)) *testEngine {
	t.Helper()
	te := newTestEngine(t, append(configure, func(c *config.Config) { c.Pool.Size = size })...)
	te.waitPoolFull(t)
	return te
}

func (te *testEngine) waitPoolFull(t *testing.T) {
	t.Helper()
	eventually(t, 60*time.Second, "the warm pool never filled", func() bool {
		ready, size := te.PoolReady()
		return ready == size
	})
}

// readyIDs are the containers in the pool now.
func (te *testEngine) readyIDs() map[string]bool {
	ids := map[string]bool{}
	for _, id := range te.warmPart.WarmPool().IDs() {
		ids[id] = true
	}
	return ids
}

// fromPool reports whether a sandbox's container was made by a warm pool.
func (te *testEngine) fromPool(t *testing.T, id string) bool {
	t.Helper()
	c, err := te.docker.Inspect(context.Background(), id)
	if err != nil {
		t.Fatalf("inspect %s: %v", id, err)
	}
	return c.Labels[sandbox.LabelPool] != ""
}

// TestPoolNeverHandsOutTwice: many concurrent creates against a full pool get
// distinct containers; those from the pool have left it and carry their
// sandbox name, and each one works.
func TestPoolNeverHandsOutTwice(t *testing.T) {
	const size, creates = 3, 10
	te := newPoolEngine(t, size)
	infos := make([]sandbox.Info, creates)
	errs := make([]error, creates)
	var wg sync.WaitGroup
	for i := range creates {
		wg.Go(func() {
			req := sandbox.CreateRequest{}
			if i%2 == 0 {
				req.Name = fmt.Sprintf("par-%d", i)
			}
			infos[i], errs[i] = te.Create(context.Background(), te.owner, req, nil)
		})
	}
	wg.Wait()
	seen, pooled, ready := map[string]bool{}, 0, te.readyIDs()
	for i, info := range infos {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		if seen[info.ID] || ready[info.ID] {
			t.Fatalf("container %s handed out twice (or still in the pool)", sandbox.ShortID(info.ID))
		}
		seen[info.ID] = true
		if te.fromPool(t, info.ID) {
			pooled++
			c, _ := te.docker.Inspect(context.Background(), info.ID)
			if want := te.Engine.cfg().containerName(info.Name); c.Name != want {
				t.Errorf("pooled sandbox %s is named %q, want %q", info.Name, c.Name, want)
			}
		}
	}
	if pooled < size {
		t.Errorf("%d of %d creates came from a full pool of %d", pooled, creates, size)
	}
	if got := te.command(t, "par-0", "hostname >/dev/null && echo ok").Stdout; got != "ok\n" {
		t.Errorf("a sandbox made in the rush does not work: %q", got)
	}
}

// TestPoolRefillsAndNames: a take is refilled in the background; the taken
// sandbox gets the name asked for, and a taken name is refused with the
// pooled container kept.
func TestPoolRefillsAndNames(t *testing.T) {
	te := newPoolEngine(t, 2)
	before := te.readyIDs()
	info := te.create(t, sandbox.CreateRequest{Name: "warm", Language: "python"})
	if !before[info.ID] || te.readyIDs()[info.ID] {
		t.Fatalf("sandbox %s did not come out of the pool %v", sandbox.ShortID(info.ID), before)
	}
	if info.Name != "warm" || info.Spec.Language != "python" || info.Owner != te.owner {
		t.Errorf("pooled sandbox %+v, want name warm, language python, our owner", info)
	}
	te.waitPoolFull(t)
	_, err := te.Create(context.Background(), te.owner, sandbox.CreateRequest{Name: "warm"}, nil)
	wantKind(t, err, sandbox.ErrConflict)
	if ready, size := te.PoolReady(); ready != size {
		t.Errorf("after a name conflict the pool holds %d of %d", ready, size)
	}
	if out, err := te.ExecCode(context.Background(), te.owner, "warm", sandbox.CodeRequest{Code: "print(6*7)"}); err != nil || out.Result.Stdout != "42\n" {
		t.Errorf("code in the pooled sandbox: %+v, %v", out.Result, err)
	}
}

// TestPoolInvisible: pooled containers are not sandboxes: not listed, not in
// snapshots, not reachable by id.
func TestPoolInvisible(t *testing.T) {
	te := newPoolEngine(t, 2)
	ctx := context.Background()
	if list, _ := te.List(ctx); len(list) != 0 {
		t.Errorf("List shows pooled containers: %+v", list)
	}
	snap, err := te.Watch(ctx).Next(ctx)
	if err != nil || len(snap.Sandboxes) != 0 {
		t.Errorf("snapshot shows pooled containers: %+v, %v", snap.Sandboxes, err)
	}
	for id := range te.readyIDs() {
		_, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "true"})
		wantKind(t, err, sandbox.ErrNotFound)
	}
}

// TestPoolBypass: a request the pooled containers cannot serve (another
// network) is created cold, and the pool keeps what it has.
func TestPoolBypass(t *testing.T) {
	te := newPoolEngine(t, 1)
	before := te.readyIDs()
	for _, req := range []sandbox.CreateRequest{{Network: sandbox.NetworkEgress}} {
		if info := te.create(t, req); te.fromPool(t, info.ID) {
			t.Errorf("request %+v was served from the pool", req)
		}
	}
	if after := te.readyIDs(); len(after) != len(before) || !after[keyOf(before)] {
		t.Errorf("the pool changed from %v to %v", before, after)
	}
}

func keyOf(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

func TestPoolMatchesAndConfig(t *testing.T) {
	base := sandbox.Spec{Image: "img", Network: "none", MemoryMB: 1024, CPUs: 1, PidsLimit: 512, Workdir: "/workspace"}
	with := func(f func(*sandbox.Spec)) sandbox.Spec { s := base; f(&s); return s }
	cases := []struct {
		want sandbox.Spec
		ok   bool
	}{
		{with(func(s *sandbox.Spec) { s.Name, s.Language, s.Persistent = "x", "python", true }), true},
		{with(func(s *sandbox.Spec) { s.Env = map[string]string{} }), true},
		{with(func(s *sandbox.Spec) { s.Env = map[string]string{"A": "1"} }), true},
		{with(func(s *sandbox.Spec) { s.MemoryMB, s.CPUs = 256, 0.5 }), true},
		{with(func(s *sandbox.Spec) { s.Image = "other" }), false},
		{with(func(s *sandbox.Spec) { s.PidsLimit = 64 }), false},
		{with(func(s *sandbox.Spec) { s.Network = "bridge" }), false},
		{with(func(s *sandbox.Spec) { s.CapAdd = []string{"CHOWN"} }), false},
		{with(func(s *sandbox.Spec) { s.Runtime = "runsc" }), false},
	}
	for _, c := range cases {
		if got := pool.Adjustable(base, c.want); got != c.ok {
			t.Errorf("Adjustable(%+v) = %v, want %v", c.want, got, c.ok)
		}
	}
	ok := defaultPoolConfig()
	for _, change := range []func(*config.Pool){
		func(p *config.Pool) { p.Size = -1 }, func(p *config.Pool) { p.Size = maxPoolSize + 1 },
		func(p *config.Pool) { p.Images = []string{""} }, func(p *config.Pool) { p.MaxTotal = -1 },
		func(p *config.Pool) { p.MaxTotal = maxPoolTotal + 1 }, func(p *config.Pool) { p.MemoryMB = 8 },
		func(p *config.Pool) { p.Idle = config.Duration{} },
	} {
		bad := ok
		change(&bad)
		cfg := config.Default()
		cfg.Pool = bad
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "pool.") {
			t.Errorf("pool %+v: error %v, want one naming pool.", bad, err)
		}
	}
	if cfg := config.Default(); cfg.Pool.Size != 2 || cfg.Validate() != nil {
		t.Errorf("default pool %+v: want 2 of the default image, valid", cfg.Pool)
	}
}

// TestPoolDropsDeadContainers: a pooled container killed outside Sandtray
// leaves the pool (it is never handed out) and is replaced.
func TestPoolDropsDeadContainers(t *testing.T) {
	te := newPoolEngine(t, 1)
	dead := keyOf(te.readyIDs())
	if err := te.docker.Kill(context.Background(), dead); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the killed container stayed in the pool", func() bool {
		ready := te.readyIDs()
		return !ready[dead] && len(ready) == 1
	})
	if info := te.create(t, sandbox.CreateRequest{}); info.ID == dead {
		t.Error("a dead pooled container was handed out")
	}
}

// TestPoolWarmsPythonKernel: a sandbox taken from the pool has its python
// kernel running before its first call, and that call uses it.
func TestPoolWarmsPythonKernel(t *testing.T) {
	te := newPoolEngine(t, 1)
	info := te.create(t, sandbox.CreateRequest{})
	running := func() bool { return te.kernels.Running(info.ID, pool.Kernel) }
	if !running() {
		t.Fatal("the pooled sandbox has no running python kernel")
	}
	for _, code := range []string{"x = 41", "print(x + 1)"} {
		out, err := te.ExecCode(context.Background(), te.owner, info.ID, sandbox.CodeRequest{Code: code})
		if err != nil || out.Result.ExitCode != 0 {
			t.Fatalf("%s: %+v, %v", code, out.Result, err)
		}
		if code == "print(x + 1)" && out.Result.Stdout != "42\n" {
			t.Errorf("state did not carry over in the warm kernel: %q", out.Result.Stdout)
		}
	}
}
