package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// BenchmarkExecuteCodeKernel times a warm execute_code of python's print(1)
// through the Engine API: the sandbox's kernel is already running.
func BenchmarkExecuteCodeKernel(b *testing.B) { benchExecuteCode(b, true, false) }

// BenchmarkExecuteCodeKernelNoLink is the same where the engine does not
// link to its sandboxes (a daemon on another host, a VM's): the session is
// the agent's attachment.
func BenchmarkExecuteCodeKernelNoLink(b *testing.B) { benchExecuteCode(b, true, true) }

// BenchmarkExecuteCodeExec is the same on the per-call exec path: a fresh
// docker exec and interpreter for every call, as before kernels.
func BenchmarkExecuteCodeExec(b *testing.B) { benchExecuteCode(b, false, false) }

// benchExecuteCode reports the median (p50-ms) and p90 besides the mean:
// a run of Docker calls has a long tail that the mean hides.
func benchExecuteCode(b *testing.B, kernels, noLink bool) {
	e := newKernelBenchEngine(b, noLink)
	ctx := context.Background()
	owner := sandbox.Owner{Session: "bench", Client: "engine-bench 1.0"}
	e.SessionStarted(owner)
	info, err := e.Create(ctx, owner, sandbox.CreateRequest{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	req := sandbox.CodeRequest{Code: "print(1)"}
	call := func() {
		out, err := e.execCode(ctx, owner, info.ID, req, kernels)
		if err != nil || out.Result.Stdout != "1\n" {
			b.Fatalf("print(1): %+v, %v", out.Result, err)
		}
	}
	call() // start the kernel, load the interpreter's files
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		started := time.Now()
		call()
		times = append(times, time.Since(started))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
}

func newKernelBenchEngine(b *testing.B, noLink bool) *Engine {
	b.Helper()
	cfg := config.Default()
	cfg.DefaultImage = dockertest.Image(b)
	cfg.StateDir = b.TempDir()
	cfg.Pool.Size = 0
	e, err := newEngine(context.Background(), cfg, dockertest.Client(b), Options{Labels: dockertest.Labels(b), Tick: 200 * time.Millisecond, NoLink: noLink})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		e.stopLoops()
		e.kernels.CloseAll()
	})
	return e
}
