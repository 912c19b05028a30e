package portfwd

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// memStore keeps what OnSave hears, in memory, as the engine keeps it in
// the sandboxes' state.
type memStore struct {
	mu    sync.Mutex
	saved map[string][]sandbox.PortForward
	keep  map[string]bool // Restore, by sandbox
}

func (s *memStore) save(id string, fws []sandbox.PortForward) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved[id] = fws
}

func (s *memStore) list() []Saved {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Saved
	for id, fws := range s.saved {
		if len(fws) > 0 {
			out = append(out, Saved{ID: id, Name: "box " + id, Ports: fws, Restore: s.keep[id]})
		}
	}
	return out
}

func (s *memStore) ports(id string) []sandbox.PortForward {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved[id]
}

// TestSaveEndRestore: the table saves a sandbox's forwards, drops them when
// it ends them, and brings back only those it is told to restore.
func TestSaveEndRestore(t *testing.T) {
	srv := serve(t, 0, func(c net.Conn) { io.WriteString(c, "hi") })
	store := &memStore{saved: map[string][]sandbox.PortForward{}, keep: map[string]bool{"a": true}}
	local := func(string) Opener { return localOpener{} }
	p := NewPorts(Policy{MaxPerSandbox: 2, MaxConns: 4}, local, store.save, slog.New(slog.DiscardHandler))
	defer p.Close()
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if _, err := p.Start(ctx, p.Sandbox(id, "box "+id), srv.port, 0); err != nil {
			t.Fatal(err)
		}
		p.Save(id)
		if got := store.ports(id); len(got) != 1 || got[0].Port != srv.port {
			t.Fatalf("saved for %s: %+v, want the forward of port %d", id, got, srv.port)
		}
	}
	saved := store.ports("a")[0]
	// A restart: the forwards end without being saved, then come back.
	p.Close()
	p2 := NewPorts(Policy{MaxPerSandbox: 2, MaxConns: 4}, local, store.save, slog.New(slog.DiscardHandler))
	defer p2.Close()
	p2.RestoreAll(ctx, store.list())
	if got := p2.Forwards("a"); len(got) != 1 || got[0].Port != srv.port {
		t.Errorf("restored for a: %+v, want the forward of port %d", got, srv.port)
	}
	if got := store.ports("a"); len(got) != 1 || got[0].Port != saved.Port {
		t.Errorf("saved for a after the restore: %+v", got)
	}
	if got, saved := p2.Forwards("b"), store.ports("b"); len(got) != 0 || len(saved) != 0 {
		t.Errorf("b is not to be restored: live %+v, saved %+v; want none", got, saved)
	}
	if !p2.End("a") || p2.End("a") {
		t.Error("End(a) twice: want true then false")
	}
	if got := store.ports("a"); len(got) != 0 {
		t.Errorf("saved for a after End: %+v, want none", got)
	}
}
