package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/socket"
)

// fakeEngine is the engine's side of the endpoint, in memory.
type fakeEngine struct {
	mu      sync.Mutex
	pending []sandbox.EgressPending
	answers []string
	snaps   chan sandbox.Snapshot
}

func (f *fakeEngine) EgressPending() []sandbox.EgressPending {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sandbox.EgressPending(nil), f.pending...)
}

func (f *fakeEngine) AnswerEgress(_ context.Context, id string, a sandbox.EgressAnswer) error {
	if id != "p1" {
		return fmt.Errorf("no pending request %q: %w", id, sandbox.ErrNotFound)
	}
	f.mu.Lock()
	f.answers = append(f.answers, id+" "+string(a))
	f.mu.Unlock()
	return nil
}

func (f *fakeEngine) AnswerEgressHost(_ context.Context, ref, host string, a sandbox.EgressAnswer) (int, error) {
	f.mu.Lock()
	f.answers = append(f.answers, ref+" "+host+" "+string(a))
	f.mu.Unlock()
	return 1, nil
}

func (f *fakeEngine) EgressNetwork(_ context.Context, ref string) (sandbox.EgressNetwork, error) {
	return sandbox.EgressNetwork{Rules: sandbox.EgressRules{Allow: []string{"pypi.org"}}}, nil
}

type chanSnaps chan sandbox.Snapshot

func (c chanSnaps) Next(ctx context.Context) (sandbox.Snapshot, error) {
	select {
	case s := <-c:
		return s, nil
	case <-ctx.Done():
		return sandbox.Snapshot{}, ctx.Err()
	}
}

func (f *fakeEngine) Snapshots(context.Context) Snapshots { return chanSnaps(f.snaps) }

// serve starts the endpoint on a private socket and returns a dialer.
func serve(t *testing.T, f *fakeEngine) func() *Client {
	t.Helper()
	_, dial := serveWith(t, f)
	return dial
}

// serveWith is serve, returning the server too.
func serveWith(t *testing.T, f *fakeEngine) (*Server, func() *Client) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run", "control.sock")
	ln, err := socket.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	srv := NewServer(f, nil)
	go func() {
		defer close(done)
		srv.Serve(ctx, ln)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return srv, func() *Client {
		c, err := socket.DialPrivate(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		cl := NewClient(c)
		t.Cleanup(func() { cl.Close() })
		return cl
	}
}

func TestControlCalls(t *testing.T) {
	f := &fakeEngine{pending: []sandbox.EgressPending{{ID: "p1", Sandbox: "sb", Host: "new.test", Port: 443}}}
	c := serve(t, f)()
	ctx := context.Background()
	p, err := c.Pending(ctx)
	if err != nil || len(p) != 1 || p[0].Host != "new.test" {
		t.Fatalf("pending %+v %v", p, err)
	}
	if n, err := c.AnswerHost(ctx, "sb", "new.test:443", sandbox.EgressAllowSandbox); err != nil || n != 1 {
		t.Fatalf("answer host %d %v", n, err)
	}
	if err := c.Answer(ctx, "p1", sandbox.EgressDeny); err != nil {
		t.Fatal(err)
	}
	if err := c.Answer(ctx, "nope", sandbox.EgressDeny); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := c.Call(ctx, "egress.nope", nil, nil); !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("unknown method: %v", err)
	}
	n, err := c.Network(ctx, "sb")
	if err != nil || len(n.Rules.Allow) != 1 {
		t.Fatalf("network %+v %v", n, err)
	}
	if fmt.Sprint(f.answers) != "[sb new.test:443 sandbox p1 deny]" {
		t.Fatalf("answers %v", f.answers)
	}
}

func TestControlWatch(t *testing.T) {
	f := &fakeEngine{snaps: make(chan sandbox.Snapshot)}
	c := serve(t, f)()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events := make(chan []sandbox.EgressPending, 4)
	go c.Stream(ctx, MethodWatch, nil, func(raw json.RawMessage) error {
		var p []sandbox.EgressPending
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		events <- p
		return nil
	})
	if first := <-events; len(first) != 0 {
		t.Fatalf("first event %+v", first)
	}
	f.snaps <- sandbox.Snapshot{Egress: []sandbox.EgressPending{{ID: "p9", Host: "x.test"}}}
	if ev := <-events; len(ev) != 1 || ev[0].ID != "p9" {
		t.Fatalf("event %+v", ev)
	}
	f.snaps <- sandbox.Snapshot{Egress: []sandbox.EgressPending{{ID: "p9", Host: "x.test"}}} // no change: no event
	f.snaps <- sandbox.Snapshot{}
	if ev := <-events; len(ev) != 0 {
		t.Fatalf("event %+v", ev)
	}
}

func TestPath(t *testing.T) {
	if p := Path("/run/user/1000/sandtray/mcp.sock"); p != "/run/user/1000/sandtray/control.sock" {
		t.Fatal(p)
	}
	if p := Path(`\\.\pipe\sandtray-me`); p != `\\.\pipe\sandtray-me-control` {
		t.Fatal(p)
	}
}

var _ net.Conn = (net.Conn)(nil)
