package engine

import (
	"context"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// BenchmarkCreateToFirstResultPool times a new sandbox to the first result of
// python's print(1), taken from a full warm pool. Refilling between
// iterations is not timed: it measures the warm case a client meets when it
// does not create sandboxes faster than the pool refills.
func BenchmarkCreateToFirstResultPool(b *testing.B) {
	benchCreateToFirstResult(b, 2)
}

// BenchmarkCreateToFirstResultNoPool is the same with the pool disabled:
// every sandbox is created and started by Docker on demand.
func BenchmarkCreateToFirstResultNoPool(b *testing.B) {
	benchCreateToFirstResult(b, 0)
}

func benchCreateToFirstResult(b *testing.B, poolSize int) {
	e := newBenchEngine(b, poolSize)
	ctx := context.Background()
	owner := sandbox.Owner{Session: "bench", Client: "engine-bench 1.0"}
	e.SessionStarted(owner)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		waitPool(b, e)
		b.StartTimer()
		info, err := e.Create(ctx, owner, sandbox.CreateRequest{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		out, err := e.ExecCode(ctx, owner, info.ID, sandbox.CodeRequest{Code: "print(1)"})
		if err != nil || out.Result.Stdout != "1\n" {
			b.Fatalf("first result: %+v, %v", out.Result, err)
		}
		b.StopTimer()
		if err := e.Delete(ctx, owner, info.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// newBenchEngine is a real engine with its own labels and state, whose
// containers are removed when the benchmark ends.
func newBenchEngine(b *testing.B, poolSize int) *Engine {
	b.Helper()
	cli := dockertest.Client(b)
	cfg := config.Default()
	cfg.DefaultImage = dockertest.Image(b)
	cfg.StateDir = b.TempDir()
	cfg.Pool.Size = poolSize
	e, err := newEngine(context.Background(), cfg, cli, Options{Labels: dockertest.Labels(b), Tick: 200 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.stopLoops)
	return e
}

// waitPool waits until the pool (if any) is full.
func waitPool(b *testing.B, e *Engine) {
	deadline := time.Now().Add(time.Minute)
	for ready, size := e.PoolReady(); ready < size; ready, size = e.PoolReady() {
		if time.Now().After(deadline) {
			b.Fatalf("the warm pool holds %d of %d after a minute", ready, size)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
