package loopback

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/internal/loopback/loopbacktest"
)

// TestPeerUIDOfARealConnection: the other end of a loopback connection made
// by this process is this user's, on both families.
func TestPeerUIDOfARealConnection(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("%s: %v", addr, err)
		}
		defer ln.Close()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer server.Close()
		if uid, err := PeerUID(server); uid != os.Getuid() || err != nil {
			t.Errorf("%s: PeerUID = %d, %v; want %d", addr, uid, err, os.Getuid())
		}
	}
}

// syncBuffer is a log sink tests can read while the listener writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOwnUserRefusesAnotherUsersConnection: a connection whose socket
// another user made is closed before Accept returns anything, on IPv4 and
// IPv6; this user's next connection is the one Accept returns.
func TestOwnUserRefusesAnotherUsersConnection(t *testing.T) {
	if !loopbacktest.Available() {
		t.Skip(loopbacktest.ErrCannot)
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			raw, err := net.Listen("tcp", addr)
			if err != nil {
				t.Skipf("%s: %v", addr, err)
			}
			var logs syncBuffer
			ln := OwnUser(raw, slog.New(slog.NewTextHandler(&logs, nil)), "test port")
			defer ln.Close()
			got := make(chan net.Conn, 2)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						close(got)
						return
					}
					got <- c
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			foreign, err := loopbacktest.DialAs(ctx, loopbacktest.Nobody, "tcp", raw.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer foreign.Close()
			foreign.SetReadDeadline(time.Now().Add(30 * time.Second))
			if n, err := foreign.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("another user's connection: read %d, %v; want it closed by the listener", n, err)
			}
			own, err := net.Dial("tcp", raw.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer own.Close()
			select {
			case c := <-got:
				defer c.Close()
				if c.RemoteAddr().String() != own.LocalAddr().String() {
					t.Errorf("Accept returned %s, want this user's %s (the other user's was %s)", c.RemoteAddr(), own.LocalAddr(), foreign.LocalAddr())
				}
			case <-ctx.Done():
				t.Fatal("this user's connection was not accepted")
			}
			if !strings.Contains(logs.String(), "refused a connection from another user") || !strings.Contains(logs.String(), "peer_uid=65534") {
				t.Errorf("the refusal is not logged with the peer's uid: %s", logs.String())
			}
		})
	}
}

// TestOwnUserRefusesAClosedLoopbackPeer: a loopback connection whose client
// socket is already gone cannot be attributed to anyone, so it is refused;
// the check fails closed.
func TestOwnUserRefusesAClosedLoopbackPeer(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := OwnUser(raw, nil, "test port").(*ownUser)
	defer ln.Close()
	client, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client.(*net.TCPConn).SetLinger(0)
	client.Close() // a reset: the client's row leaves the table at once
	server, err := raw.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if ln.admit(server) {
		t.Error("a loopback connection whose client socket is gone was admitted")
	}
	_, _ = io.Copy(io.Discard, server)
}
