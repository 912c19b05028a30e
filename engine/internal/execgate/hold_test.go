package execgate

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
)

// startCounter is a runtime that only counts the processes that reach a
// container, per container: the execs of the agent's wrapper (an
// install's), and the spawns of each container's agent, which it serves in
// process.
type startCounter struct {
	runtime.Full
	c1, c2 atomic.Int32
}

func (s *startCounter) count(id string) {
	if id == "c1" {
		s.c1.Add(1)
	} else {
		s.c2.Add(1)
	}
}

func (s *startCounter) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	s.count(id)
	return 0, nil
}

func (s *startCounter) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	return serveAgent(func(wire.Request) { s.count(id) }), nil
}

// serveAgent is an agent served in process on a pipe: every spawn is told
// to spawned, and exits 0 at once.
func serveAgent(spawned func(wire.Request)) runtime.ExecConn {
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
				defer st.Close()
				var req wire.Request
				if wire.ReadJSON(st, wire.KindRequest, wire.MaxRequest, &req) != nil {
					return
				}
				switch req.Op {
				case wire.OpHello:
					_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Version: wire.Version, Pid: 1})
				case wire.OpSpawn:
					spawned(req)
					_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Pid: 2})
					_ = wire.WriteJSON(st, wire.KindExit, wire.Exit{})
				}
			}()
		}
	}()
	return pipeConn{a}
}

// pipeConn is one end of a net.Pipe as a runtime.ExecConn.
type pipeConn struct{ net.Conn }

func (p pipeConn) CloseWrite() error                       { return p.Conn.Close() }
func (pipeConn) Started(context.Context) error             { return nil }
func (pipeConn) Stderr() string                            { return "" }
func (pipeConn) ExitCode(ctx context.Context) (int, error) { return 0, nil }

// TestExecGateHoldsEveryProcessButTheInstalls: while an install holds a
// container, an exec into it waits at the gate (counted as waiting, not as
// in flight) until the hold ends or its context does, saying why; the
// install's own execs and other containers' go through.
func TestExecGateHoldsEveryProcessButTheInstalls(t *testing.T) {
	d := &startCounter{}
	x := New(d)
	release := x.Hold("c1")
	ctx := context.Background()

	done := make(chan error, 1)
	go func() {
		_, err := x.Exec(ctx, "c1", runtime.ExecOptions{})
		done <- err
	}()
	testwait.Eventually(t, 5*time.Second, "the exec to wait at the gate", func() bool { return x.WaitingIn("c1") == 1 })
	if n := d.c1.Load(); n != 0 || x.ExecsIn("c1") != 0 {
		t.Fatalf("an exec reached Docker (%d) or counts as in flight (%d) while the install holds the container", n, x.ExecsIn("c1"))
	}

	install := Holding(ctx, "c1")
	if _, err := x.Exec(install, "c1", runtime.ExecOptions{}); err != nil || d.c1.Load() != 1 {
		t.Errorf("the install's own exec: %v, %d reached Docker", err, d.c1.Load())
	}
	if _, err := x.Exec(ctx, "c2", runtime.ExecOptions{}); err != nil || d.c2.Load() != 1 {
		t.Errorf("another container's exec: %v, %d reached Docker", err, d.c2.Load())
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := x.Exec(short, "c1", runtime.ExecOptions{})
	if !errors.Is(err, sandbox.ErrConflict) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an exec that gave up waiting: %v; want a conflict that says it waited", err)
	}
	if err := x.Wait(install, "c1"); err != nil {
		t.Errorf("the install waiting for its own hold: %v", err)
	}

	release()
	if err := <-done; err != nil || d.c1.Load() != 2 {
		t.Errorf("the held exec after the install: %v, %d reached Docker", err, d.c1.Load())
	}
	if x.WaitingIn("c1") != 0 || x.ExecsIn("c1") != 0 {
		t.Errorf("after the hold: %d waiting, %d in flight", x.WaitingIn("c1"), x.ExecsIn("c1"))
	}
}
