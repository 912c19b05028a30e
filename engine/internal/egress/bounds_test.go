package egress

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// F63: a sandbox that tries host after host does not grow the gate's table
// of its hosts past hostsKept: the host recorded longest ago makes room.
func TestHostTableIsBounded(t *testing.T) {
	tg := newTestGate(t, Options{Allow: []string{}}, nil)
	const tried = hostsKept + 100
	for i := range tried {
		tg.raw(t, fmt.Sprintf("GET http://h%d.test/ HTTP/1.1\r\nHost: x\r\n\r\n", i))
	}
	tg.raw(t, "GET http://h0.test/again HTTP/1.1\r\nHost: x\r\n\r\n") // h0 is recent again
	n, _ := tg.Network("box1")
	var hosts []string
	for _, h := range n.Hosts {
		hosts = append(hosts, h.Host)
	}
	if len(hosts) != hostsKept || !slices.Contains(hosts, "h0.test") || !slices.Contains(hosts, fmt.Sprintf("h%d.test", tried-1)) || slices.Contains(hosts, "h1.test") {
		t.Fatalf("%d hosts kept after %d tried (h0 again, h1 %v, the last %v); want %d, the oldest dropped",
			len(hosts), tried, slices.Contains(hosts, "h1.test"), slices.Contains(hosts, fmt.Sprintf("h%d.test", tried-1)), hostsKept)
	}
}

// F63: what waits for the user is bounded per sandbox; a request past it is
// refused at once, saying why, and a model's reason is kept short.
func TestPendingAsksAreBounded(t *testing.T) {
	answers := map[string][]string{}
	var hosts []string
	for i := range pendingPerBox + 4 {
		h := fmt.Sprintf("new%d.test", i)
		answers[h] = []string{"93.184.216.34"}
		hosts = append(hosts, h)
	}
	tg := newTestGate(t, Options{Allow: []string{}, Ask: true, AskTimeout: time.Minute}, answers)
	res, err := tg.Request(context.Background(), "box1", hosts, strings.Repeat("why ", 2000))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pending) != pendingPerBox || len(res.Denied) != 4 || !strings.Contains(res.Denied[0].Why, "already wait for the user") {
		t.Fatalf("%d pending, %d denied (%+v); want %d and 4, refused as too many", len(res.Pending), len(res.Denied), res.Denied, pendingPerBox)
	}
	p := tg.Pending()
	if len(p) != pendingPerBox || len(p[0].Reason) > maxReason+len("…") {
		t.Fatalf("%d pending, a reason of %d bytes kept", len(p), len(p[0].Reason))
	}
	// A connection past the bound is refused at once, not kept waiting.
	start := time.Now()
	resp, body := tg.raw(t, "GET http://new19.test/ HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 403 || !strings.Contains(body, "already wait for the user") || time.Since(start) > 5*time.Second {
		t.Fatalf("a connection past the bound: %d %q after %s", resp.StatusCode, body, time.Since(start))
	}
}
