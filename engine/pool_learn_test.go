package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// otherImage tags the test image under a reference of the test's own, so
// the pool sees an image it was not configured with; the tag is removed
// when the test ends.
func (te *testEngine) otherImage(t *testing.T) string {
	t.Helper()
	ref := "sandtray-test/pool-learn:" + randomHex(4)
	ctx := context.Background()
	if err := te.docker.TagImage(ctx, te.cfg.DefaultImage, ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { te.docker.RemoveImage(context.Background(), ref) })
	return ref
}

// poolOf reports what the pool holds of image.
func (te *testEngine) poolOf(image string) (sandbox.PoolImage, bool) {
	for _, s := range te.PoolStatus() {
		if s.Image == image {
			return s, true
		}
	}
	return sandbox.PoolImage{}, false
}

// TestPoolLearnsImageAndDropsItWhenDeleted: an image the pool was not
// configured with is created cold once; then the pool keeps a spare of it,
// and the next sandbox of it comes from the pool. When the user deletes the
// image, its spare is removed and the pool forgets it.
func TestPoolLearnsImageAndDropsItWhenDeleted(t *testing.T) {
	te := newPoolEngine(t, 1)
	other := te.otherImage(t)
	first := te.create(t, sandbox.CreateRequest{Image: other})
	if te.fromPool(t, first.ID) {
		t.Fatal("the first sandbox of an image never used came from the pool")
	}
	eventually(t, 60*time.Second, "the pool never made a spare of the image just used", func() bool {
		s, _ := te.poolOf(other)
		return s.Ready == 1 && !s.Configured
	})
	second := te.create(t, sandbox.CreateRequest{Image: other})
	if !te.fromPool(t, second.ID) {
		t.Error("the second sandbox of an image used before did not come from the pool")
	}
	eventually(t, 60*time.Second, "the pool did not refill the learned image", func() bool {
		s, _ := te.poolOf(other)
		return s.Ready == 2 && s.Want == 2 // two creates within a minute: a burst of two
	})
	spare := ""
	for id := range te.readyIDs() {
		if c, err := te.docker.Inspect(context.Background(), id); err == nil && c.Image == other {
			spare = id
		}
	}
	if spare == "" {
		t.Fatal("no ready spare of the learned image")
	}
	if err := te.docker.RemoveImage(context.Background(), other); err != nil {
		t.Fatalf("delete the image: %v", err)
	}
	eventually(t, 30*time.Second, "the spare of a deleted image stayed", func() bool {
		_, known := te.poolOf(other)
		_, err := te.docker.Inspect(context.Background(), spare)
		return !known && err != nil
	})
	if s, _ := te.poolOf(te.cfg.DefaultImage); s.Want != 1 {
		t.Errorf("the configured image's share changed: %+v", s)
	}
}

// TestPoolShrinksWhenIdle: a burst grows an image's share beyond pool.size;
// once the image has been idle for pool.idle, a learned image has no spare
// left and the configured one is back to pool.size.
func TestPoolShrinksWhenIdle(t *testing.T) {
	te := newPoolEngine(t, 1, func(c *config.Config) { c.Pool.Idle = config.Duration{Duration: 6 * time.Second} })
	other := te.otherImage(t)
	for range 3 {
		te.create(t, sandbox.CreateRequest{})
	}
	te.create(t, sandbox.CreateRequest{Image: other})
	if s, _ := te.poolOf(te.cfg.DefaultImage); s.Want != 3 {
		t.Errorf("after a burst of 3 the default image's share is %d, want 3", s.Want)
	}
	if s, _ := te.poolOf(other); s.Want != 1 {
		t.Errorf("the image used once has a share of %d, want 1", s.Want)
	}
	eventually(t, 60*time.Second, "the pool did not shrink after idling", func() bool {
		d, _ := te.poolOf(te.cfg.DefaultImage)
		_, known := te.poolOf(other)
		return !known && d.Want == 1 && d.Ready == 1 && len(te.readyIDs()) == 1
	})
}

// TestPoolAdjustsLimitsInPlace: a request with its own memory and CPU
// limits takes a spare, whose container then has those limits, and keeps
// them in its spec across a restart of the engine.
func TestPoolAdjustsLimitsInPlace(t *testing.T) {
	te := newPoolEngine(t, 1)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{MemoryMB: 256, CPUs: 0.5, Persistent: true})
	if !te.fromPool(t, info.ID) {
		t.Fatal("a request with other limits did not take a spare")
	}
	raw, err := te.docker.InspectRaw(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HostConfig struct{ Memory, MemorySwap, NanoCpus int64 }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if hc := doc.HostConfig; hc.Memory != 256<<20 || hc.MemorySwap != 256<<20 || hc.NanoCpus != 5e8 {
		t.Errorf("HostConfig %+v, want memory and swap 256 MiB, 0.5 CPUs", hc)
	}
	if info.Spec.MemoryMB != 256 || info.Spec.CPUs != 0.5 {
		t.Errorf("spec %+v, want the limits asked for", info.Spec)
	}
	te.stopLoops()
	cfg := te.cfg
	cfg.Pool.Size = 0
	e2, err := newEngine(ctx, cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.stopLoops()
	got, err := e2.Get(ctx, info.ID)
	if err != nil || got.Spec.MemoryMB != 256 || got.Spec.CPUs != 0.5 {
		t.Errorf("after a restart: %+v, %v; want the limits asked for", got.Spec, err)
	}
}

// TestPoolEnvThroughExec: a request with env takes a spare; every command
// and the python kernel see the env, a call's own env wins over it, and a
// restart of the engine keeps it.
func TestPoolEnvThroughExec(t *testing.T) {
	te := newPoolEngine(t, 1)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Env: map[string]string{"GREETING": "hi", "OTHER": "x"}, Persistent: true})
	if !te.fromPool(t, info.ID) {
		t.Fatal("a request with env did not take a spare")
	}
	if got := te.command(t, info.ID, `echo "$GREETING $OTHER"`).Stdout; got != "hi x\n" {
		t.Errorf("command sees %q, want the sandbox's env", got)
	}
	out, err := te.ExecCode(ctx, te.owner, info.ID, sandbox.CodeRequest{Code: `import os; print(os.environ.get("GREETING"))`})
	if err != nil || out.Result.Stdout != "hi\n" {
		t.Errorf("python kernel sees %+v, %v; want hi", out.Result, err)
	}
	own, err := te.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: `echo "$GREETING"`, Env: map[string]string{"GREETING": "call"}})
	if err != nil || own.Result.Stdout != "call\n" {
		t.Errorf("a call's own env: %+v, %v; want it to win", own.Result, err)
	}
	te.stopLoops()
	cfg := te.cfg
	cfg.Pool.Size = 0
	e2, err := newEngine(ctx, cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.stopLoops()
	after, err := e2.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: `echo "$GREETING"`})
	if err != nil || after.Result.Stdout != "hi\n" {
		t.Errorf("after a restart: %+v, %v; want the env kept", after.Result, err)
	}
}

// TestCreateMissingImageSaysSo: with the image looked for only after Docker
// has none, a missing image still gets the sentence naming it, and leaves
// no container behind.
func TestCreateMissingImageSaysSo(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.AllowNetwork = true }) // pulls need it
	_, err := te.Create(context.Background(), te.owner, sandbox.CreateRequest{Image: "sandtray-test/absent:" + randomHex(4)}, nil)
	wantKind(t, err, sandbox.ErrNotFound)
	if !strings.Contains(err.Error(), "is not on this machine") {
		t.Errorf("error %q does not say the image is missing", err)
	}
	if list, _ := te.docker.List(context.Background(), te.Engine.cfg().scope(), true); len(list) != 0 {
		t.Errorf("containers left: %+v", list)
	}
}
