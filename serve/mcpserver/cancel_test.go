package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// blockingExec makes fake's ExecCommand wait until its context ends, then
// report ctx.Err() on the returned channel; started receives each caller.
func blockingExec(fake *fakeBackend) (started chan sandbox.Owner, stopped chan error) {
	started, stopped = make(chan sandbox.Owner, 64), make(chan error, 64)
	fake.onExec = func(ctx context.Context, owner sandbox.Owner, _ sandbox.CommandRequest) sandbox.ExecOutcome {
		started <- owner
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
		case <-time.After(testTimeout):
			stopped <- errors.New("the call's context was never cancelled")
		}
		return sandbox.ExecOutcome{}
	}
	return started, stopped
}

// TestCancellationRightAfterItsRequestStopsIt sends a call and its
// cancellation in one write. mcp-go alone would read the cancellation before
// the call's goroutine registered it, and let the call run to its end.
func TestCancellationRightAfterItsRequestStopsIt(t *testing.T) {
	fake := newFake()
	_, stopped := blockingExec(fake)
	r := newRawSession(t, fake, Options{})
	r.initialize()
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_command","arguments":{"command":"sleep 1000"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user pressed stop"}}`)
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Fatalf("backend saw %v, want context.Canceled", err)
	}
	// The cancelled call's backend work has ended: a reply to it, were one
	// sent, would be queued well before the reply to a ping sent now.
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	var ids []string
	for len(ids) == 0 || ids[len(ids)-1] != "3" {
		var msg struct{ ID json.RawMessage }
		if err := json.Unmarshal(r.receive(), &msg); err != nil {
			t.Fatalf("reply: %v", err)
		}
		ids = append(ids, string(msg.ID))
	}
	if len(ids) != 1 {
		t.Errorf("replies after the cancellation have ids %v, want only the ping's (3): a cancelled request gets no reply", ids)
	}
}

func TestGoSDKClientCancellationStopsTheCall(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			fake := newFake()
			started, stopped := blockingExec(fake)
			cs := sdkClient(t, serve(t, fake, Options{}), protocol, nil)
			ctx, cancel := context.WithCancel(testContext(t))
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "sleep 1000"}})
				done <- err
			}()
			<-started
			cancel() // the client sends notifications/cancelled
			if err := <-stopped; !errors.Is(err, context.Canceled) {
				t.Errorf("backend saw %v, want context.Canceled", err)
			}
			if err := <-done; err == nil {
				t.Error("the cancelled call returned no error")
			}
			// The session carries on.
			if res := callSDK(t, cs, "list_sandboxes", nil); res.IsError {
				t.Errorf("list_sandboxes after a cancellation: %v", res.Content)
			}
		})
	}
}
