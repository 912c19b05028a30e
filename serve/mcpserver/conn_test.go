package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestOversizeRequestsAreToolErrorsThatSayTheLimit(t *testing.T) {
	tests := []struct {
		name    string
		content int
		want    string
	}{
		// Within the connection's line cap: the tool names the argument.
		{"argument over the limit", 2000, "The content argument is 2 KiB, over the limit of 1 KiB per request."},
		// Over the line cap: the connection refuses the line unread.
		{"message over the line cap", 100 << 10, "over the limit of 1 KiB per request."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			c := mcpGoClient(t, serve(t, fake, Options{MaxRequestBytes: 1024}))
			res := callMCPGo(t, c, "write_file", map[string]any{"sandbox_id": "a", "path": "big", "content": strings.Repeat("x", tt.content)})
			if text := textOfResult(res); !res.IsError || !strings.Contains(text, tt.want) || !strings.Contains(text, "split") {
				t.Errorf("got isError=%v %q, want a tool error containing %q and advice", res.IsError, text, tt.want)
			}
			if n := fake.callCount(); n != 0 {
				t.Errorf("backend called %d times for an oversize request", n)
			}
			// The connection survives and serves the next request.
			if res := callMCPGo(t, c, "list_sandboxes", nil); res.IsError {
				t.Errorf("next call failed: %s", textOfResult(res))
			}
		})
	}
}

func TestOversizeLineReachesGoSDKAsToolError(t *testing.T) {
	cs := sdkClient(t, serve(t, newFake(), Options{MaxRequestBytes: 1024}), "", nil)
	res := callSDK(t, cs, "execute_code", map[string]any{"code": strings.Repeat("#", 100<<10)})
	if !res.IsError {
		t.Fatalf("want a tool error, got %+v", res)
	}
}

func TestServeStdioReturnsAtEOFAfterAnswering(t *testing.T) {
	fake := newFake()
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli","version":"9"}}}` + "\n" +
		`not json` + "\n")
	var out bytes.Buffer
	if err := New(fake, Options{Version: "1.2.3"}).ServeStdio(testContext(t), in, &out); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	var replies []map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line %q is not JSON: %v", line, err)
		}
		replies = append(replies, m)
	}
	if len(replies) != 2 {
		t.Fatalf("got %d replies, want the initialize result and a parse error:\n%s", len(replies), out.String())
	}
	byID := map[bool]map[string]any{}
	for _, r := range replies {
		byID[r["id"] != nil] = r
	}
	info := byID[true]["result"].(map[string]any)["serverInfo"].(map[string]any)
	if info["name"] != "sandtray" || info["version"] != "1.2.3" {
		t.Errorf("serverInfo = %v, want sandtray 1.2.3", info)
	}
	if code := byID[false]["error"].(map[string]any)["code"]; code != float64(-32700) {
		t.Errorf("malformed line got %v, want a parse error (-32700)", byID[false])
	}
	select {
	case session := <-fake.endedCh:
		if started := fake.sessionsStarted(); len(started) != 1 || started[0].Client != "cli 9" || started[0].Session != session {
			t.Errorf("started %+v, ended %q", started, session)
		}
	default:
		t.Error("SessionEnded was not called by the time ServeStdio returned")
	}
}

func TestServeStdioReturnsWhenContextEndsAndClosesInput(t *testing.T) {
	in, feed := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(newFake(), Options{}).ServeStdio(ctx, in, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after cancel: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeStdio did not return after its context ended")
	}
	if _, err := feed.Write([]byte("{}\n")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("writing to stdin after shutdown: %v, want io.ErrClosedPipe (input closed)", err)
	}
}
