//go:build linux

package agent

import (
	"net"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
	"github.com/sandtray/sandtray/engine/runtime"
)

// hello opens a stream on the engine's end of a session over c and asks
// the agent who it is.
func hello(t *testing.T, c net.Conn) *wire.Session {
	t.Helper()
	sess, err := wire.Client(c)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sess.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := wire.WriteJSON(st, wire.KindRequest, wire.Request{Op: wire.OpHello}); err != nil {
		t.Fatal(err)
	}
	var r wire.Reply
	if err := wire.ReadJSON(st, wire.KindReply, wire.MaxReply, &r); err != nil || r.Pid != os.Getpid() {
		t.Fatalf("hello over the link: %+v, %v", r, err)
	}
	return sess
}

// TestTheLinkDialsAtStartAndWhenAsked: the agent dials the engine's socket
// at its start and serves a session on it; while that session lives, a
// SIGUSR1 dials no second one; once it has ended, a SIGUSR1 dials again.
func TestTheLinkDialsAtStartAndWhenAsked(t *testing.T) {
	if path.Dir(wire.LinkSocket) != runtime.LinkDir || wire.LinkSocket != runtime.LinkSocket {
		t.Fatalf("the agent dials %s, the engine mounts its link at %s", wire.LinkSocket, runtime.LinkSocket)
	}
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	next := func(what string) net.Conn {
		t.Helper()
		select {
		case c := <-conns:
			return c
		case <-time.After(5 * time.Second):
			t.Fatalf("the agent did not dial %s", what)
			return nil
		}
	}
	go link(sock)
	first := next("at its start")
	sess := hello(t, first)
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-conns:
		c.Close()
		t.Fatal("a SIGUSR1 dialled a second link while the first served")
	case <-time.After(300 * time.Millisecond):
	}
	sess.Close()
	first.Close()
	time.Sleep(100 * time.Millisecond) // the agent sees the end
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	second := next("when asked again after its session ended")
	hello(t, second).Close()
	second.Close()
}
