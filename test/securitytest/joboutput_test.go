package securitytest

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// heapWatch samples the live heap (HeapInuse right after a collection)
// every interval until stop, and keeps the highest. The engine runs in
// the test's own process, so the live heap is what job output holds of
// the engine's memory: the resident size is that plus the collector's
// headroom (GOGC) and the race detector's shadow, which a bound on the
// live heap bounds in turn, while the resident size itself moves with
// the detector and with when the runtime returns pages.
type heapWatch struct {
	base, peak uint64
	stop, done chan struct{}
}

func watchHeap(interval time.Duration) *heapWatch {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	w := &heapWatch{base: m.HeapInuse, peak: m.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			runtime.GC()
			runtime.ReadMemStats(&m)
			w.peak = max(w.peak, m.HeapInuse)
		}
	}()
	return w
}

// rise stops the watch and says how far the live heap rose above where it began.
func (w *heapWatch) rise() uint64 {
	close(w.stop)
	<-w.done
	return w.peak - min(w.peak, w.base)
}

// procStatus is a field of /proc/self/status ("VmRSS", "VmHWM"), for the
// log, or "?" where there is none.
func procStatus(field string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// flood is a job-output flood: jobs background jobs in two sandboxes,
// each printing size bytes, all at once, under an engine whose config
// configure adjusts (the job limits are raised so that all run).
type flood struct {
	jobs, size int
	bound      uint64 // the most the live heap may rise, and why
	why        string
	configure  func(*config.Config)
}

// TestJobOutputIsBounded: 24 background jobs that each print 8 MB at once
// keep the engine's live heap within its job-output budget (8 MiB here,
// and 16 MiB spilled) and the activity's copies, and a model reading a
// job is told which output was dropped and why, with offsets that stay
// coherent (issue 23, item 1; docs/security.md F32). Before the fix each job
// held up to 8 MiB in memory and 200 finished jobs were kept: 30 such jobs
// took the engine from 32 MB to 486 MB. The issue's own case, 100 jobs
// with the default budgets, is TestJobOutputIsBoundedAt100Jobs.
func TestJobOutputIsBounded(t *testing.T) {
	runFlood(t, flood{jobs: 24, size: 8_000_000, bound: 40 << 20,
		why: "8 MiB of job output (limits.job_output_memory_bytes), each job's activity entry, and the execs' buffers",
		configure: func(c *config.Config) {
			c.Limits.JobOutputMemoryBytes, c.Limits.JobOutputDiskBytes = 8<<20, 16<<20
		}})
}

// TestJobOutputIsBoundedAt100Jobs is issue 23's case: 100 jobs printing
// 8 MB each with the default budgets. Docker starts a container's execs
// one at a time, so on a busy machine the starts alone take minutes: it
// runs when SANDTRAY_JOB_FLOOD is set (like the soak, outside make test).
func TestJobOutputIsBoundedAt100Jobs(t *testing.T) {
	if os.Getenv("SANDTRAY_JOB_FLOOD") == "" {
		t.Skip("set SANDTRAY_JOB_FLOOD=1 to flood an engine with 100 jobs of 8 MB")
	}
	runFlood(t, flood{jobs: 100, size: 8_000_000, bound: 96 << 20,
		why: "32 MiB of job output (limits.job_output_memory_bytes), two sandboxes' 16 MiB of activity, and the execs' buffers"})
}

func runFlood(t *testing.T, f flood) {
	e := newEnv(t, func(c *config.Config) {
		c.Limits.MaxJobs, c.Limits.MaxJobsTotal, c.Pool.Size = f.jobs, f.jobs, 0
		if f.configure != nil {
			f.configure(c)
		}
	})
	c := e.client
	boxes := []string{c.sandbox(t, nil), c.sandbox(t, nil)}
	jobs, size := f.jobs, f.size
	rssStart := procStatus("VmRSS")
	heap := watchHeap(250 * time.Millisecond)
	started := time.Now()
	ids := make([]string, jobs)
	// Each waits until every job of its sandbox has started (Docker
	// starts a container's execs one at a time), so that all print at
	// once: the shell's own glob counts them, and a poll forks one sleep.
	perBox := strconv.Itoa(jobs / len(boxes))
	for i := range jobs {
		r := c.ok(t, "execute_command", map[string]any{"sandbox_id": boxes[i%2], "background": true, "timeout_s": 600,
			"command": "touch /tmp/ready.$$; until set -- /tmp/ready.*; [ $# -ge " + perBox + " ]; do sleep 1; done; " +
				"head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' x"})
		if ids[i] = r.str("job_id"); ids[i] == "" {
			t.Fatalf("job %d: no job_id in %s", i, r.text)
		}
	}
	// Each job is done once job_status says so, or once it has been
	// forgotten (finished jobs are kept by bytes too). The wait asks the
	// engine itself: through the client, every poll's reply would stay in
	// the tap's record, in this process's heap, and count as the engine's.
	pending := ids
	ctx := context.Background()
	eventually(t, 10*time.Minute, "the jobs to end", func() bool {
		for len(pending) > 0 {
			st, err := e.eng.JobStatus(ctx, pending[0], int64(size))
			switch {
			case err == nil && st.Status == sandbox.JobRunning:
				return false
			case err != nil && !errors.Is(err, sandbox.ErrNotFound):
				t.Fatalf("job_status %s: %v", pending[0], err)
			}
			pending = pending[1:]
		}
		return true
	})
	rise := heap.rise()
	t.Logf("%d jobs of %d bytes ended in %s; the live heap rose by %.1f MiB at most; the process's resident size was %s at the start, %s at its peak",
		jobs, size, time.Since(started).Round(time.Second), float64(rise)/(1<<20), rssStart, procStatus("VmHWM"))
	if rise > f.bound {
		t.Errorf("%d jobs printing %d bytes each raised the engine's live heap by %d MiB; want at most %d MiB (%s)",
			jobs, size, rise>>20, f.bound>>20, f.why)
	}

	// A model pages a job still kept whose end was dropped from 0, as it
	// would: every kept byte once, then one note naming the rest.
	var job string
	for i := jobs - 1; i >= 0 && job == ""; i-- {
		if r := c.call(t, "job_status", map[string]any{"job_id": ids[i], "since": size - 1}); !r.isError && r.str("output_dropped") != "" {
			job = ids[i]
		}
	}
	if job == "" {
		t.Fatal("no job kept says its output's end was dropped; want the budget to have been full")
	}
	var read int
	var dropped string
	for since := 0; since < size; {
		r := c.ok(t, "job_status", map[string]any{"job_id": job, "since": since})
		out := r.str("output")
		if strings.Trim(out, "x") != "" {
			t.Fatalf("job_status from %d returned something else than the job's x's: %.80q", since, out)
		}
		read += len(out)
		next := int(r.num("next_offset"))
		if d := r.str("output_dropped"); d != "" {
			dropped = d
			if !strings.Contains(r.text, d) {
				t.Errorf("the text a model reads does not carry the note %q", d)
			}
		}
		if next <= since {
			t.Fatalf("next_offset %d from since %d: paging does not advance", next, since)
		}
		since = next
	}
	want := strconv.Itoa(size-read) + " bytes of output between offsets " + strconv.Itoa(read) + " and " + strconv.Itoa(size) +
		" were dropped: the engine's job-output budget is full"
	if !strings.HasPrefix(dropped, want) {
		t.Errorf("paged %d of %d bytes; note %q, want one starting %q", read, size, dropped, want)
	}
}
