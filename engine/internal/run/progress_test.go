package run

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestProgressCoalesces: a flood of output reaches the Progress callback at
// most once per progressInterval, each report at most progressChunk bytes,
// and the last output is reported when the call ends.
func TestProgressCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reports []string
		var times []time.Time
		out := NewOutput(1<<20, nil, func(_, _ float64, msg string) {
			mu.Lock()
			reports = append(reports, msg)
			times = append(times, time.Now())
			mu.Unlock()
		})
		for i := 0; i < 100; i++ { // a second of output, a line every 10ms
			out.Write(false, []byte(strings.Repeat("x", 100)+"\n"))
			time.Sleep(10 * time.Millisecond)
		}
		out.Write(false, []byte("last\n"))
		out.StopProgress()
		mu.Lock()
		defer mu.Unlock()
		if n := len(reports); n < 5 || n > 12 {
			t.Errorf("%d reports for a second of output, want about one per %s", n, progressInterval)
		}
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < progressInterval && i < len(times)-1 {
				t.Errorf("reports %d and %d came %s apart, under %s", i-1, i, gap, progressInterval)
			}
		}
		for _, r := range reports {
			if len(r) > progressChunk {
				t.Errorf("a report of %d bytes, over %d", len(r), progressChunk)
			}
		}
		if last := reports[len(reports)-1]; !strings.HasSuffix(last, "last\n") {
			t.Errorf("the last report %q misses the last output", last)
		}
	})
}
