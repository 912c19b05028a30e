package securitytest

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine"
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

// TestJobOutputIsBounded: 100 background jobs that each print 8 MB (two
// sandboxes of 50, the job limits raised so that all run at once) keep
// the engine's live heap within its job-output budget and the activity
// caps, and a model reading a job is told which output was dropped and
// why, with offsets that stay coherent (issue 23, item 1; SECURITY.md F32).
// Before the fix each job held up to 8 MiB in memory and 200 finished
// jobs were kept: 30 such jobs took the engine from 32 MB to 486 MB.
func TestJobOutputIsBounded(t *testing.T) {
	e := newEnv(t, func(c *engine.Config) { c.Limits.MaxJobs, c.Limits.MaxJobsTotal = 50, 100 })
	c := e.client
	boxes := []string{c.sandbox(t, nil), c.sandbox(t, nil)}
	const jobs, size = 100, 8_000_000
	rssStart := procStatus("VmRSS")
	heap := watchHeap(250 * time.Millisecond)
	started := time.Now()
	ids := make([]string, jobs)
	// They all wait for a go, so that they print at the same time.
	for i := range jobs {
		r := c.ok(t, "execute_command", map[string]any{"sandbox_id": boxes[i%2], "background": true,
			"command": "while [ ! -e /tmp/go ]; do sleep 0.1; done; head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' x"})
		if ids[i] = r.str("job_id"); ids[i] == "" {
			t.Fatalf("job %d: no job_id in %s", i, r.text)
		}
	}
	for _, box := range boxes {
		c.command(t, box, "touch /tmp/go", 30)
	}
	// Each job is done once job_status says so, or once it has been
	// forgotten (finished jobs are kept by bytes too). One call per look:
	// the first job still running ends the look.
	pending := ids
	eventually(t, 10*time.Minute, "100 jobs of 8 MB to end", func() bool {
		for len(pending) > 0 {
			r := c.call(t, "job_status", map[string]any{"job_id": pending[0], "since": size})
			if r.err != nil {
				t.Fatalf("job_status %s: %v", pending[0], r.err)
			}
			if !r.isError && r.str("status") == "running" {
				return false
			}
			if r.isError && !strings.Contains(r.text, "forgotten") {
				t.Fatalf("job_status %s: %s", pending[0], r.text)
			}
			pending = pending[1:]
		}
		return true
	})
	rise := heap.rise()
	t.Logf("%d jobs of %d bytes ended in %s; the live heap rose by %.1f MiB at most; the process's resident size was %s at the start, %s at its peak",
		jobs, size, time.Since(started).Round(time.Second), float64(rise)/(1<<20), rssStart, procStatus("VmHWM"))
	// 32 MiB of job output (limits.job_output_memory_bytes) and each
	// sandbox's activity (16 MiB at most, F26), with room for the
	// connections and buffers of 100 execs.
	if rise > 96<<20 {
		t.Errorf("100 jobs printing 8 MB each raised the engine's live heap by %d MiB; want at most 96 MiB "+
			"(32 MiB of job output and two sandboxes' 16 MiB of activity)", rise>>20)
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
