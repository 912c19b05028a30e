package testwait

import (
	"context"
	"errors"
	"testing"
	"time"
)

// recorder is a testing.TB that records a failure instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Errorf(string, ...any) { r.failed = true }

func TestEventually(t *testing.T) {
	start := time.Now()
	n := 0
	Eventually(t, time.Second, "never", func() bool { n++; return n == 3 })
	if n != 3 || time.Since(start) > time.Second {
		t.Errorf("Eventually checked %d times in %s, want 3 quickly", n, time.Since(start))
	}
	r := &recorder{TB: t}
	Eventually(r, 30*time.Millisecond, "a condition that never holds", func() bool { return false })
	if !r.failed {
		t.Error("Eventually did not fail on a condition that never held")
	}
}

func TestSettle(t *testing.T) {
	base := Now()
	stop := make(chan struct{})
	// Eight, not one: a goroutine of the runtime or of an earlier test that
	// ends after the baseline must not hide the ones left running.
	for range 8 {
		go func() { <-stop }()
	}
	r := &recorder{TB: t}
	base.Settle(r, 30*time.Millisecond, 0)
	if !r.failed {
		t.Error("Settle passed with a goroutine left running")
	}
	close(stop)
	base.Settle(t, 5*time.Second, 0)
}

// TestServe: a server that ends with its context passes; one that fails, or
// returns too late, fails the test at its cleanup.
func TestServe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(ctx context.Context) error
		fails bool
	}{
		{"ends with its context", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, false},
		{"ends with an error", func(ctx context.Context) error { <-ctx.Done(); return errors.New("listener broke") }, true},
		{"returns too late", func(ctx context.Context) error { <-ctx.Done(); time.Sleep(time.Second); return nil }, true},
	} {
		var r *recorder
		t.Run(tc.name, func(t *testing.T) {
			r = &recorder{TB: t}
			Serve(r, 50*time.Millisecond, tc.serve)
		})
		if r.failed != tc.fails {
			t.Errorf("%s: failed %v, want %v", tc.name, r.failed, tc.fails)
		}
	}
}
