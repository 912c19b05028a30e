package fakeruntime

import (
	"context"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
)

// subscriber is one event stream: what the daemon emits waits in its queue
// (unbounded, so the daemon never blocks on a slow reader) until its
// goroutine hands it on.
type subscriber struct {
	labels map[string]string // the containers it follows (container events)

	mu     sync.Mutex // a leaf: taken under the daemon's lock
	queue  []any
	err    error
	wake   chan struct{}
	failed bool
}

func newSubscriber(labels map[string]string) *subscriber {
	return &subscriber{labels: labels, wake: make(chan struct{}, 1)}
}

func (s *subscriber) push(ev any) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	s.signal()
}

func (s *subscriber) fail(err error) {
	s.mu.Lock()
	if !s.failed {
		s.failed, s.err = true, err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next returns the next queued event, or the stream's failure.
func (s *subscriber) next() (ev any, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		ev, s.queue = s.queue[0], s.queue[1:]
		return ev, true, nil
	}
	return nil, false, s.err
}

// relay hands s's events to out until ctx ends (no error) or the stream
// fails (its error), then closes both channels, as the Docker runtime's
// streams do; done unregisters s.
func relay[T any](ctx context.Context, s *subscriber, done func()) (<-chan T, <-chan error) {
	out := make(chan T)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		defer done()
		for {
			ev, ok, err := s.next()
			switch {
			case ok:
				select {
				case out <- ev.(T):
				case <-ctx.Done():
					return
				}
				continue
			case err != nil:
				if ctx.Err() == nil {
					errc <- err
				}
				return
			}
			select {
			case <-s.wake:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, errc
}

// Events streams the lifecycle events of the containers carrying every
// label of labels until ctx ends; the subscription is in place when it
// returns.
func (r *Runtime) Events(ctx context.Context, labels map[string]string) (<-chan runtime.Event, <-chan error) {
	s := newSubscriber(copyMap(labels))
	if err := r.lock(ctx, "Events"); err != nil {
		s.fail(err)
		return relay[runtime.Event](ctx, s, func() {})
	}
	r.d.subs[s] = struct{}{}
	r.unlock()
	return relay[runtime.Event](ctx, s, func() {
		r.d.mu.Lock()
		delete(r.d.subs, s)
		r.d.mu.Unlock()
	})
}

// ImageEvents streams image events until ctx ends.
func (r *Runtime) ImageEvents(ctx context.Context) (<-chan runtime.ImageEvent, <-chan error) {
	s := newSubscriber(nil)
	if err := r.lock(ctx, "ImageEvents"); err != nil {
		s.fail(err)
		return relay[runtime.ImageEvent](ctx, s, func() {})
	}
	r.d.imageSubs[s] = struct{}{}
	r.unlock()
	return relay[runtime.ImageEvent](ctx, s, func() {
		r.d.mu.Lock()
		delete(r.d.imageSubs, s)
		r.d.mu.Unlock()
	})
}

// emit sends a container event to the subscribers that follow c. Callers
// hold d.mu.
func (d *daemon) emit(c *container, actions ...string) {
	now := time.Now()
	for s := range d.subs {
		if !hasLabels(c.labels, s.labels) {
			continue
		}
		for _, a := range actions {
			s.push(runtime.Event{ContainerID: c.id, Action: a, Time: now})
		}
	}
}

// emitImage sends an image event. Callers hold d.mu.
func (d *daemon) emitImage(ref, action string) {
	for s := range d.imageSubs {
		s.push(runtime.ImageEvent{Ref: ref, Action: action})
	}
}

// hasLabels reports whether have carries every label of want ("" values
// only need the key), as Docker's label filters do.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		got, ok := have[k]
		if !ok || (v != "" && got != v) {
			return false
		}
	}
	return true
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
