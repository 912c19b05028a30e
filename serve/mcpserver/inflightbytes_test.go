package mcpserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/mcpserver/transport"
)

// TestInFlightRequestBytesAreBounded (F16): a client that sends many large
// requests at once has at most two full-size requests' worth of bytes
// dispatched at a time; the rest wait unread on the connection, and all are
// answered in the end.
func TestInFlightRequestBytesAreBounded(t *testing.T) {
	const maxRequest = 64 << 10
	var running, most atomic.Int32
	release := make(chan struct{})
	fake := newFake()
	fake.onExec = func(ctx context.Context, _ sandbox.Owner, _ sandbox.CommandRequest) sandbox.ExecOutcome {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		running.Add(-1)
		return sandbox.ExecOutcome{}
	}
	c := mcpGoClient(t, serve(t, fake, Options{MaxRequestBytes: maxRequest}))
	const requests = 8
	stdin := strings.Repeat("x", 60<<10) // each request about 61 KiB on the wire
	limit := int32(transport.InFlightBytes(maxRequest) / (61 << 10))
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			callMCPGo(t, c, "execute_command", map[string]any{"sandbox_id": "a", "command": "cat", "stdin": stdin})
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for running.Load() < min(limit, requests) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // would more be dispatched?
	if got := most.Load(); got > limit {
		t.Errorf("%d requests of 61 KiB ran at once, want at most %d (%d bytes in flight)", got, limit, transport.InFlightBytes(maxRequest))
	}
	close(release)
	wg.Wait()
	if n := fake.callCount(); n != requests {
		t.Errorf("the backend saw %d calls, want all %d", n, requests)
	}
}
