package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestReconfigureAppliesLimitsToTheNextSandbox: a changed memory limit and
// pids limit apply to the next sandbox without a restart (the container
// Docker runs has them), while the running sandbox keeps its own; a changed
// HTTP listen address is reported as needing a restart and the engine
// keeps the old one.
func TestReconfigureAppliesLimitsToTheNextSandbox(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	before := te.create(t, sandbox.CreateRequest{})
	cfg := te.Config()
	cfg.Limits.MemoryMB, cfg.Limits.Pids = 300, 200
	cfg.HTTP.Listen = "127.0.0.1:18765"
	restart, err := te.Reconfigure(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(restart, []string{"http.listen"}) {
		t.Errorf("needs a restart: %q, want [http.listen]", restart)
	}
	if got := te.Config(); got.HTTP.Listen != "" || got.Limits.MemoryMB != 300 {
		t.Errorf("config in force: listen %q memory %d; want the old listen address and the new memory", got.HTTP.Listen, got.Limits.MemoryMB)
	}
	after := te.create(t, sandbox.CreateRequest{})
	if after.Spec.MemoryMB != 300 || after.Spec.PidsLimit != 200 {
		t.Errorf("new sandbox: memory %d MB, pids %d; want 300 and 200", after.Spec.MemoryMB, after.Spec.PidsLimit)
	}
	raw, err := te.docker.InspectRaw(context.Background(), after.ID)
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ HostConfig struct{ Memory int64 } }
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.HostConfig.Memory != 300<<20 {
		t.Errorf("Docker runs the new sandbox with %d bytes of memory, want %d", c.HostConfig.Memory, 300<<20)
	}
	if b, _ := te.Get(context.Background(), before.ID); b.Spec.MemoryMB != te.cfg.Limits.MemoryMB {
		t.Errorf("the running sandbox's memory became %d MB; it keeps its %d", b.Spec.MemoryMB, te.cfg.Limits.MemoryMB)
	}
}

// TestReconfigureRefusesBadConfig: an invalid config changes nothing.
func TestReconfigureRefusesBadConfig(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	cfg := te.Config()
	cfg.Limits.MemoryMB = 1
	if _, err := te.Reconfigure(context.Background(), cfg); !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("memory_mb 1: %v, want invalid", err)
	}
	if got := te.Config().Limits.MemoryMB; got != te.cfg.Limits.MemoryMB {
		t.Errorf("memory in force %d after a refused change, want %d", got, te.cfg.Limits.MemoryMB)
	}
}

// TestReconfigureStartsThePool: pool.size from 0 to 1 fills a spare
// without a restart, and back to 0 removes it.
func TestReconfigureStartsThePool(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	cfg := te.Config()
	cfg.Pool.Size = 1
	if restart, err := te.Reconfigure(context.Background(), cfg); err != nil || len(restart) != 0 {
		t.Fatalf("pool.size 1: restart %q, %v", restart, err)
	}
	te.waitPoolFull(t)
	if ready, size := te.PoolReady(); size != 1 || ready != 1 {
		t.Fatalf("pool: %d of %d ready, want 1 of 1", ready, size)
	}
	ids := te.readyIDs()
	cfg.Pool.Size = 0
	if _, err := te.Reconfigure(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the old pool's spare was never removed", func() bool {
		for id := range ids {
			if _, err := te.docker.Inspect(context.Background(), id); err == nil {
				return false
			}
		}
		return true
	})
}

// TestChangedKeys names each changed key as config.toml spells it.
func TestChangedKeys(t *testing.T) {
	a := config.Default()
	b := a
	b.Limits.MaxCopyBytes++ // an embedded section's key
	b.StateDir = "/elsewhere"
	b.Egress.Allow = []string{}
	if got, want := changedKeys(a, b), []string{"egress.allow", "limits.max_copy_bytes", "state_dir"}; !slices.Equal(got, want) {
		t.Errorf("changed keys %q, want %q", got, want)
	}
}
