package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The snapshot benchmarks time one operation on a sandbox with 100 MB of
// changed files (100 files of 1 MB of random bytes in the workdir), as
// docs/snapshots.md reports:
//
//	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=sandtray/sandbox:latest \
//	  go test ./engine -run '^$' -bench 'Snapshot100MB' -benchtime 5x -count 1

const changed100MB = "mkdir -p data && for i in $(seq 100); do head -c 1048576 /dev/urandom > data/f$i; done"

// medians times each run of op and reports their median as median_s/op
// (next to Go's mean, ns/op).
type medians struct {
	b    *testing.B
	runs []time.Duration
}

func (m *medians) time(op func()) {
	start := time.Now()
	op()
	m.runs = append(m.runs, time.Since(start))
}

func (m *medians) report() {
	if len(m.runs) == 0 {
		return
	}
	slices.Sort(m.runs)
	m.b.ReportMetric(m.runs[len(m.runs)/2].Seconds(), "median_s/op")
}

func benchSandbox(b *testing.B) (*Engine, sandbox.Owner, string) {
	e := newBenchEngine(b, 0)
	ctx := context.Background()
	owner := sandbox.Owner{Session: "bench", Client: "engine-bench 1.0"}
	e.SessionStarted(owner)
	info, err := e.Create(ctx, owner, sandbox.CreateRequest{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { removeSnapshotImages(e) })
	if out, err := e.ExecCommand(ctx, owner, info.ID, sandbox.CommandRequest{Command: changed100MB}); err != nil || out.Result.ExitCode != 0 {
		b.Fatalf("write 100 MB: %+v %v", out.Result, err)
	}
	return e, owner, info.ID
}

func BenchmarkSnapshot100MB(b *testing.B) {
	e, owner, id := benchSandbox(b)
	ctx := context.Background()
	m := &medians{b: b}
	defer m.report()
	for range b.N {
		var s sandbox.SnapshotInfo
		var err error
		m.time(func() { s, err = e.Snapshot(ctx, owner, id, sandbox.SnapshotRequest{}) })
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := e.DeleteSnapshot(ctx, owner, id, s.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkRestore100MB restores the 100 MB after they were all deleted
// and replaced by 100 MB of other files.
func BenchmarkRestore100MB(b *testing.B) {
	e, owner, id := benchSandbox(b)
	ctx := context.Background()
	s, err := e.Snapshot(ctx, owner, id, sandbox.SnapshotRequest{})
	if err != nil {
		b.Fatal(err)
	}
	m := &medians{b: b}
	defer m.report()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if _, err := e.ExecCommand(ctx, owner, id, sandbox.CommandRequest{Command: "rm -r data && mkdir -p other && for i in $(seq 100); do head -c 1048576 /dev/urandom > other/g$i; done"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		m.time(func() { _, err = e.Restore(ctx, owner, id, s.ID) })
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFork100MB(b *testing.B) {
	e, owner, id := benchSandbox(b)
	ctx := context.Background()
	m := &medians{b: b}
	defer m.report()
	for range b.N {
		var forks []sandbox.Fork
		var err error
		m.time(func() { forks, err = e.Fork(ctx, owner, id, sandbox.ForkRequest{}) })
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, f := range forks {
			e.Delete(ctx, owner, f.SandboxID)
		}
		b.StartTimer()
	}
}
