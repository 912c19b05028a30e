package control

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// watchRetry is how long Watch waits before it opens a broken stream again.
const watchRetry = time.Second

// Watch follows the engine's snapshots over a stream of its own, until ctx
// is done. A slow window gets the newest snapshot, never a queue of old
// ones. When the stream breaks, Next says so once and the stream is opened
// again.
func (g *GUIClient) Watch(ctx context.Context) Snapshots {
	s := &latestSnapshot{wake: make(chan struct{}, 1)}
	go func() {
		for ctx.Err() == nil {
			err := g.callStream(ctx, MethodGUIWatch, guiParams{}, func(raw json.RawMessage) error {
				var snap sandbox.Snapshot
				if err := json.Unmarshal(raw, &snap); err != nil {
					return err
				}
				s.put(&snap, nil)
				return nil
			}, nil)
			s.put(nil, err)
			select {
			case <-ctx.Done():
			case <-time.After(watchRetry):
			}
		}
	}()
	return s
}

// latestSnapshot keeps the newest snapshot (or error) for Next.
type latestSnapshot struct {
	mu     sync.Mutex
	latest *sandbox.Snapshot
	err    error
	wake   chan struct{}
}

func (s *latestSnapshot) put(snap *sandbox.Snapshot, err error) {
	s.mu.Lock()
	if snap != nil {
		s.latest = snap
	} else {
		s.err = err
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *latestSnapshot) Next(ctx context.Context) (sandbox.Snapshot, error) {
	for {
		s.mu.Lock()
		if snap := s.latest; snap != nil {
			s.latest = nil
			s.mu.Unlock()
			return *snap, nil
		}
		if err := s.err; err != nil {
			s.err = nil
			s.mu.Unlock()
			return sandbox.Snapshot{}, err
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return sandbox.Snapshot{}, ctx.Err()
		}
	}
}
