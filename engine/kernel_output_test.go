package engine

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// heapPeak samples the heap in use while fn runs and returns how far it rose
// above where it started, and how much was allocated in all.
func heapPeak(fn func()) (rise, allocated uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return peak.Load() - min(peak.Load(), before.HeapInuse), after.TotalAlloc - before.TotalAlloc
}

// TestKernelOutputFloodBoundedMemory: 100 MB of output is capped for the
// model and the log, streamed and counted, never held.
func TestKernelOutputFloodBoundedMemory(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.code(t, id, sandbox.CodeRequest{Code: "import sys"})
	var r sandbox.ExecResult
	rise, allocated := heapPeak(func() {
		r = te.code(t, id, sandbox.CodeRequest{Code: "chunk = 'x' * 65535 + '\\n'\nfor _ in range(1600): sys.stdout.write(chunk)"})
	})
	if !r.Truncated || len(r.Stdout) != te.cfg.Limits.OutputBytes || r.ExitCode != 0 {
		t.Errorf("flood: truncated %v, %d bytes of stdout, exit %d; want it capped at %d", r.Truncated, len(r.Stdout), r.ExitCode, te.cfg.Limits.OutputBytes)
	}
	// The peak counts garbage not yet collected, the engine's other
	// goroutines' too: 16 MB is far from the 100 MB a held flood would take.
	if rise > 16<<20 || allocated > 32<<20 {
		t.Errorf("a 100 MB flood raised the heap by %d MB and allocated %d MB; want a few MB", rise>>20, allocated>>20)
	}
	t.Logf("heap rise %.1f MB, allocated %.1f MB", float64(rise)/(1<<20), float64(allocated)/(1<<20))
	logs, _ := te.Logs(context.Background(), id, 1)
	if len(logs[0].Stdout) != te.cfg.Limits.LogOutputBytes {
		t.Errorf("activity log kept %d bytes, want %d", len(logs[0].Stdout), te.cfg.Limits.LogOutputBytes)
	}
}

// TestWaitTurnsIntoJob: a call still running after wait_s returns its output
// so far and a job id; the job's output is complete and in order.
func TestWaitTurnsIntoJob(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	ctx := context.Background()
	te.code(t, id, sandbox.CodeRequest{Code: "pass"}) // the kernel's start is not what this measures
	var want strings.Builder
	for i := range 60 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	calls := []func() (sandbox.ExecOutcome, error){
		func() (sandbox.ExecOutcome, error) {
			return te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Wait: 1500 * time.Millisecond, Timeout: 20 * time.Second,
				Code: "import time, sys\nfor i in range(60):\n    print('line', i, flush=True)\n    time.sleep(0.05)"})
		},
		func() (sandbox.ExecOutcome, error) {
			return te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Wait: 1500 * time.Millisecond, Timeout: 20 * time.Second,
				Command: "for i in $(seq 0 59); do echo line $i; sleep 0.05; done"})
		},
	}
	for i, call := range calls {
		out, err := call()
		if err != nil || out.JobID == "" || !strings.HasPrefix(want.String(), out.Result.Stdout) || out.Result.Stdout == "" {
			t.Fatalf("call %d: %+v, %v; want a job with the output so far", i, out, err)
		}
		st := waitJob(t, te, out.JobID)
		if st.Status != sandbox.JobExited || st.Output != want.String() {
			t.Errorf("call %d: job %s output %q, want %q", i, st.Status, st.Output, want.String())
		}
	}
}

func waitJob(t *testing.T, te *testEngine, jobID string) sandbox.JobStatus {
	t.Helper()
	var st sandbox.JobStatus
	eventually(t, 20*time.Second, "job did not finish", func() bool {
		var err error
		if st, err = te.JobStatus(context.Background(), jobID, 0); err != nil {
			t.Fatal(err)
		}
		return st.Status != sandbox.JobRunning
	})
	return st
}

// TestExecProgressStreams: output reaches the Progress callback while the
// code still runs.
func TestExecProgressStreams(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	var mu sync.Mutex
	var seen []string
	var before bool
	progress := func(current, total float64, message string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, message)
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = te.ExecCode(context.Background(), te.owner, id, sandbox.CodeRequest{Progress: progress,
			Code: "import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')"})
	}()
	eventually(t, 10*time.Second, "no progress before the end", func() bool {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-done:
			return true
		default:
		}
		before = len(seen) > 0
		return before
	})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ""); !before || got != "first\nsecond\n" {
		t.Errorf("progress messages %q (some before the end: %v); want all the output", seen, before)
	}
}

// TestKernelImages: images the code writes to outputs/ come back, up to
// limits.max_image_bytes each.
func TestKernelImages(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Limits.MaxImageBytes = 2048 })
	id := te.create(t, sandbox.CreateRequest{}).ID
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("p", 100)
	r := te.code(t, id, sandbox.CodeRequest{Code: `import os
os.makedirs("outputs", exist_ok=True)
open("outputs/plot.png", "wb").write(b"\x89PNG\r\n\x1a\n" + b"p" * 100)
open("outputs/big.gif", "wb").write(b"G" * 4096)
open("outputs/notes.txt", "w").write("not an image")`})
	if len(r.Images) != 2 {
		t.Fatalf("images %+v; want big.gif and plot.png", r.Images)
	}
	big, plot := r.Images[0], r.Images[1]
	if plot.Path != "/workspace/outputs/plot.png" || plot.MIME != "image/png" || !bytes.Equal(plot.Data, []byte(png)) {
		t.Errorf("plot: %+v", plot)
	}
	if big.MIME != "image/gif" || len(big.Data) != 0 || big.Size != 4096 || !strings.Contains(big.Skipped, "2048") {
		t.Errorf("an image over the limit should be named and skipped: %+v", big)
	}
	if r = te.code(t, id, sandbox.CodeRequest{Code: "print(1)"}); len(r.Images) != 0 {
		t.Errorf("unchanged images came back again: %+v", r.Images)
	}
}
