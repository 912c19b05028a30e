package pool

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// fakeDocker answers the pool's Docker calls at once, but Start, which
// waits for gate when there is one, and counts the starts waiting there.
type fakeDocker struct {
	mu      sync.Mutex
	n       int
	gate    chan struct{}
	waiting chan struct{}
}

func (f *fakeDocker) Start(context.Context, string) error {
	if f.gate != nil {
		f.waiting <- struct{}{}
		<-f.gate
	}
	return nil
}

func (f *fakeDocker) Create(context.Context, runtime.CreateOptions) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return "c" + string(rune('0'+f.n)), nil
}
func (f *fakeDocker) Rename(context.Context, string, string) error { return nil }
func (f *fakeDocker) List(context.Context, map[string]string, bool) ([]runtime.Container, error) {
	return nil, nil
}
func (f *fakeDocker) Remove(context.Context, string) error                     { return nil }
func (f *fakeDocker) UpdateLimits(context.Context, string, int64, int64) error { return nil }
func (f *fakeDocker) InspectImage(context.Context, string) (runtime.Image, error) {
	return runtime.Image{ID: "sha256:1"}, nil
}
func (f *fakeDocker) ImageEvents(ctx context.Context) (<-chan runtime.ImageEvent, <-chan error) {
	out, errs := make(chan runtime.ImageEvent), make(chan error, 1)
	go func() { <-ctx.Done(); close(out); close(errs) }()
	return out, errs
}
func (f *fakeDocker) Stats(context.Context, string) (runtime.StatsSample, error) {
	return runtime.StatsSample{MemoryUsage: 20 << 20}, nil
}

// noKernels is a Kernels whose every kernel starts at once.
type noKernels struct{}

func (noKernels) Warm(context.Context, sandbox.Handle, string) error { return nil }
func (noKernels) Close(string)                                       {}

// plainSpares make a spare of the image, with no settings.
func plainSpares(c Config) Config {
	c.Spec = func(image string) (sandbox.Spec, error) { return sandbox.Spec{Image: image}, nil }
	c.Container = func(string, sandbox.Spec, time.Time) (runtime.CreateOptions, error) {
		return runtime.CreateOptions{Labels: map[string]string{}}, nil
	}
	return c
}

// TestFillsInParallel: a drained pool makes Parallel spares at once, not
// one after another, and no more than Parallel.
func TestFillsInParallel(t *testing.T) {
	h := &fakeDocker{gate: make(chan struct{}), waiting: make(chan struct{}, 10)}
	p := New(plainSpares(Config{Size: 4, Images: []string{"img"}, MaxTotal: 8, MemoryMB: 1024, Idle: time.Minute, Parallel: 2}),
		h, noKernels{}, func() {}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx, time.Hour); close(done) }()
	for range 2 {
		select {
		case <-h.waiting:
		case <-time.After(10 * time.Second):
			t.Fatal("two fills did not start at once")
		}
	}
	select {
	case <-h.waiting:
		t.Fatal("a third fill started while two were under way (Parallel is 2)")
	case <-time.After(100 * time.Millisecond):
	}
	close(h.gate) // every fill may finish now
	deadline := time.Now().Add(10 * time.Second)
	for ready, size := p.Ready(); ready < size; ready, size = p.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d of %d", ready, size)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	p.Drain(context.Background())
}
