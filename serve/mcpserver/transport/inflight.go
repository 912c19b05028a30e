package transport

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// inflight tracks a connection's running requests by JSON-RPC id, so that
// notifications/cancelled ends the right one.
//
// mcp-go v1.2.1 keeps a table of its own, keyed by session and id, but a
// request enters it only once its goroutine has reached HandleMessage. A
// client that cancels right after sending (a short client-side timeout, a
// user pressing stop) has its cancellation read first, found nothing to
// cancel, and dropped: the call then runs to its end. The read loop fills
// this table before it dispatches the request, so a cancellation read after
// its request always finds it.
type inflight struct {
	mu      sync.Mutex
	running map[string]*inflightCall
}

// inflightCall is one running request.
type inflightCall struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // by the client: its reply is not wanted
}

func newInflight() *inflight {
	return &inflight{running: make(map[string]*inflightCall)}
}

// start registers the request with the given id and returns its context,
// its record, and the function to call when it has been answered.
func (f *inflight) start(ctx context.Context, id json.RawMessage) (context.Context, *inflightCall, func()) {
	ctx, cancel := context.WithCancel(ctx)
	call := &inflightCall{cancel: cancel}
	key := requestKey(id)
	f.mu.Lock()
	f.running[key] = call
	f.mu.Unlock()
	return ctx, call, func() {
		cancel()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.running[key] == call { // a reused id may have replaced it
			delete(f.running, key)
		}
	}
}

// cancelled handles a notifications/cancelled message: it cancels the
// request it names, if that is still running.
func (f *inflight) cancelled(line []byte) {
	var msg struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || len(msg.Params.RequestID) == 0 {
		return
	}
	f.mu.Lock()
	call := f.running[requestKey(msg.Params.RequestID)]
	f.mu.Unlock()
	if call != nil {
		call.cancelled.Store(true)
		call.cancel()
	}
}

// requestKey is the canonical form of a JSON-RPC id, so that 7 and 7.0 name
// the same request while 7 and "7" do not.
func requestKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	canonical, err := json.Marshal(v)
	if err != nil {
		return string(id)
	}
	return string(canonical)
}
