package agentclient

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
)

// hostile runs an agent that answers the hello, then hands each stream to
// misbehave: the engine's end is tested against an agent the model has
// taken over.
func hostile(t *testing.T, misbehave func(st *wire.Stream, req wire.Request)) *Session {
	t.Helper()
	a, b := net.Pipe()
	go func() {
		sess, err := wire.Server(b)
		if err != nil {
			return
		}
		for {
			st, err := sess.AcceptStream()
			if err != nil {
				return
			}
			go func() {
				var req wire.Request
				if wire.ReadJSON(st, wire.KindRequest, wire.MaxRequest, &req) != nil {
					return
				}
				if req.Op == wire.OpHello {
					_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Version: wire.Version, Pid: 1})
					st.Close()
					return
				}
				misbehave(st, req)
			}()
		}
	}()
	s, err := New(context.Background(), a, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestAHugeFrameEndsTheSessionNotTheEngine: a process frame that claims a
// gigabyte fails the call with a clear error and ends that sandbox's
// session, with nothing allocated for it.
func TestAHugeFrameEndsTheSessionNotTheEngine(t *testing.T) {
	s := hostile(t, func(st *wire.Stream, req wire.Request) {
		_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Pid: 7})
		hdr := []byte{wire.KindStdout, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(hdr[1:], 1<<30)
		_, _ = st.Write(hdr)
		_, _ = io.Copy(st, io.LimitReader(zeroes{}, 1<<20))
	})
	before := heapInUse()
	_, err := s.Run(context.Background(), Process{Argv: []string{"true"}})
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "should not") {
		t.Fatalf("err = %v, want the session ended for a protocol error", err)
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the session still runs after the agent broke the protocol")
	}
	if grew := int64(heapInUse()) - int64(before); grew > 16<<20 {
		t.Errorf("the engine's heap grew %d MB for a 1 GB frame", grew>>20)
	}
}

// TestGarbageEndsTheSession: bytes that are no frame at all, in place of a
// reply, fail the call and end the session.
func TestGarbageEndsTheSession(t *testing.T) {
	s := hostile(t, func(st *wire.Stream, req wire.Request) {
		_, _ = st.Write(bytes.Repeat([]byte("garbage!"), 1000))
	})
	_, err := s.Run(context.Background(), Process{Argv: []string{"true"}})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}

// TestAReadGetsNoMoreThanAskedFor: an agent that answers a read with more
// than the limit is not believed; one that sends endless bytes after its
// reply gives the engine only what it asked for.
func TestAReadGetsNoMoreThanAskedFor(t *testing.T) {
	s := hostile(t, func(st *wire.Stream, req wire.Request) {
		_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Stat: &wire.Stat{Size: 10}, Size: req.Limit})
		_, _ = io.Copy(st, zeroes{})
	})
	data, _, err := s.Read(context.Background(), "/f", 0, 1000)
	if err != nil || len(data) != 1000 {
		t.Fatalf("read = %d bytes, %v; want the 1000 asked for", len(data), err)
	}
	s2 := hostile(t, func(st *wire.Stream, req wire.Request) {
		_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Stat: &wire.Stat{Size: 10}, Size: 1 << 40})
	})
	if _, _, err := s2.Read(context.Background(), "/f", 0, 1000); !errors.Is(err, ErrClosed) {
		t.Errorf("a read reply claiming 1 TB for 1000 bytes asked: %v, want the session ended", err)
	}
}

// TestAStalledAgentFailsTheCall: an agent that never answers a file
// operation fails it within the operation's timeout, not never.
func TestAStalledAgentFailsTheCall(t *testing.T) {
	s := hostile(t, func(st *wire.Stream, req wire.Request) { select {} })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := s.Stat(ctx, "/f"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the call's deadline", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the stalled stat took %s", took)
	}
}

// TestTooManyIncomingConnectionsAreRefused: an agent that opens more
// connections than wire.MaxStreams gets the extra ones closed at once, and
// the engine's handler never sees them.
func TestTooManyIncomingConnectionsAreRefused(t *testing.T) {
	a, b := net.Pipe()
	served := make(chan *wire.Session, 1)
	go func() {
		sess, err := wire.Server(b)
		if err != nil {
			return
		}
		served <- sess
		for {
			st, err := sess.AcceptStream()
			if err != nil {
				return
			}
			var req wire.Request
			if wire.ReadJSON(st, wire.KindRequest, wire.MaxRequest, &req) == nil {
				_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Version: wire.Version})
			}
		}
	}()
	s, err := New(context.Background(), a, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	agent := <-served
	held := make(chan struct{})
	handled := make(chan struct{}, wire.MaxStreams+64)
	if _, err := s.Listen(context.Background(), 3128, "egress", func(c net.Conn) { handled <- struct{}{}; <-held; c.Close() }); err != nil {
		t.Fatal(err)
	}
	defer close(held)
	var streams []*wire.Stream
	for range wire.MaxStreams + 32 {
		st, err := agent.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		_ = wire.WriteJSON(st, wire.KindRequest, wire.Request{Op: wire.OpConn, Tag: "egress"})
		streams = append(streams, st)
	}
	for i, st := range streams[wire.MaxStreams:] {
		_ = st.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := st.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("connection %d past the limit: read %v, want it closed by the engine", wire.MaxStreams+i, err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); len(handled) < wire.MaxStreams && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if n := len(handled); n != wire.MaxStreams {
		t.Errorf("the engine handled %d connections at once, want %d (the limit)", n, wire.MaxStreams)
	}
}

type zeroes struct{}

func (zeroes) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestAListingIsBounded: an agent that answers a listing with more entries
// than asked for has them cut to the bound, and one whose reply is larger
// than a listing may be ends the session.
func TestAListingIsBounded(t *testing.T) {
	many := make([]wire.Entry, 6000)
	for i := range many {
		many[i] = wire.Entry{Path: "f", Type: "file"}
	}
	s := hostile(t, func(st *wire.Stream, req wire.Request) {
		_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Entries: many})
	})
	entries, more, err := s.List(context.Background(), "/", 1, false, 100)
	if err != nil || len(entries) != 100 || !more {
		t.Errorf("list = %d entries, more %v, %v; want 100, more", len(entries), more, err)
	}
	huge := hostile(t, func(st *wire.Stream, req wire.Request) {
		hdr := []byte{wire.KindReply, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(hdr[1:], 64<<20)
		_, _ = st.Write(hdr)
	})
	if _, _, err := huge.List(context.Background(), "/", 1, false, 100); !errors.Is(err, ErrClosed) {
		t.Errorf("a 64 MB listing: %v, want the session ended", err)
	}
}
