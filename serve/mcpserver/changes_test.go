package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/mcpserver/tools"
)

// eventually polls cond until it holds or testTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Eventually(t, testTimeout, "waiting until "+what, cond)
}

// awaitNote waits for the next notification on ch.
func awaitNote(t *testing.T, who string, ch <-chan string) string {
	t.Helper()
	select {
	case n := <-ch:
		return n
	case <-time.After(testTimeout):
		t.Fatalf("%s got no notification", who)
		return ""
	}
}

// sdkNotes returns go-sdk client options that report resource notifications
// on the returned channel, as "list_changed" or "updated <uri>".
func sdkNotes() (*sdk.ClientOptions, <-chan string) {
	ch := make(chan string, 16)
	return &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { ch <- "list_changed" },
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			ch <- "updated " + req.Params.URI
		},
	}, ch
}

func TestSandboxesChangedReachesEveryLiveSession(t *testing.T) {
	srv := New(newFake(), Options{})

	plain := make(chan string, 16)
	mcpGo := mcpGoClient(t, serveWith(t, srv))
	mcpGo.OnNotification(func(n mcp.JSONRPCNotification) {
		if strings.HasPrefix(n.Method, "notifications/resources/") {
			plain <- strings.TrimPrefix(n.Method, "notifications/resources/")
		}
	})
	legacyOpts, legacy := sdkNotes()
	legacySDK := sdkClient(t, serveWith(t, srv), "2025-11-25", legacyOpts)
	modernOpts, modern := sdkNotes()
	modernSDK := sdkClient(t, serveWith(t, srv), "2026-07-28", modernOpts)
	for _, cs := range []*sdk.ClientSession{legacySDK, modernSDK} {
		if err := cs.Subscribe(testContext(t), &sdk.SubscribeParams{URI: tools.SandboxesURI}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
	}
	// A stateless client subscribes through a stream, which the server
	// records asynchronously.
	eventually(t, "both go-sdk sessions have subscribed", func() bool {
		return srv.transport.Subscribed(tools.SandboxesURI) == 2
	})

	srv.SandboxesChanged()

	for who, ch := range map[string]<-chan string{"go-sdk 2025-11-25": legacy, "go-sdk 2026-07-28": modern} {
		if got := awaitNote(t, who, ch); got != "list_changed" {
			t.Errorf("%s first got %q, want list_changed", who, got)
		}
		if got := awaitNote(t, who, ch); got != "updated "+tools.SandboxesURI {
			t.Errorf("%s then got %q, want updated %s", who, got, tools.SandboxesURI)
		}
	}
	if got := awaitNote(t, "mcp-go", plain); got != "list_changed" {
		t.Errorf("mcp-go got %q, want list_changed", got)
	}
	// The client handles notifications in order with replies, so after a
	// round trip anything else sent with list_changed has arrived.
	if err := mcpGo.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-plain:
		t.Errorf("mcp-go, which did not subscribe, also got %q", n)
	default:
	}
}

func TestSandboxesChangedNeverBlocksAndCoalesces(t *testing.T) {
	r := newRawSession(t, newFake(), Options{})
	r.initialize()
	// The client reads nothing now, so the server's writes stall; the host's
	// calls must not.
	returned := make(chan struct{})
	go func() {
		for range 1000 {
			r.server.SandboxesChanged()
		}
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(testTimeout):
		t.Fatal("SandboxesChanged blocked on a client that is not reading")
	}

	changes := 0
	for id := 2; id <= 3; id++ {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		for {
			line := string(r.receive())
			if strings.Contains(line, `"notifications/resources/list_changed"`) {
				changes++
				continue
			}
			if strings.Contains(line, fmt.Sprintf(`"id":%d`, id)) {
				break
			}
			t.Fatalf("unexpected message %s", line)
		}
	}
	// One may be written while later calls pile up behind it as one more.
	if changes < 1 || changes > 2 {
		t.Errorf("1000 changes while the client was not reading became %d notifications, want 1 or 2", changes)
	}
}
