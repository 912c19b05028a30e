// Package testwait is how Sandtray's tests wait: for a condition to hold,
// for goroutines and open files to settle back to a baseline after a
// test's work (the leak checks), and for a server they ran to end. Tests wait on such events, never on fixed
// sleeps: each check polls briefly and fails with what it waited for.
package testwait

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"
)

// poll is how often a condition is checked again.
const poll = 10 * time.Millisecond

// Eventually polls cond until it holds, and fails the test with what when
// within passes first.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
			return
		}
		time.Sleep(poll)
	}
}

// Baseline is what a process holds before a test's work: its goroutines
// and open file descriptors.
type Baseline struct {
	Goroutines, Files int
}

// Now takes a Baseline.
func Now() Baseline { return Baseline{Goroutines: runtime.NumGoroutine(), Files: OpenFiles()} }

// Settle waits until the goroutines are back to at most the baseline plus
// slack (the runtime and the test framework start a few of their own) and
// the open files to at most the baseline, and fails the test with every
// goroutine's stack when within passes first.
func (b Baseline) Settle(t testing.TB, within time.Duration, slack int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for runtime.NumGoroutine() > b.Goroutines+slack || OpenFiles() > b.Files {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("after %s, %d goroutines and %d open files remain, up from %d and %d:\n%s",
				within, runtime.NumGoroutine(), OpenFiles(), b.Goroutines, b.Files, buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(poll)
	}
}

// OpenFiles counts the process's open file descriptors, or returns 0 where
// it cannot (no /proc): the file check then always passes.
func OpenFiles() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}

// Serve runs serve in the background for the rest of the test. At the
// test's cleanup the context serve was given ends, and the test fails when
// serve does not return within the given time, or returns an error other
// than the context's.
func Serve(t testing.TB, within time.Duration, serve func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(within):
			t.Errorf("serve did not return within %s after its context ended", within)
		}
	})
}
