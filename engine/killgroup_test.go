package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/agent/wire"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// deafAgent serves the sandboxes' sessions with an agent that the model
// has taken over: it starts nothing, says a process started, then says
// nothing more, and never answers a kill; and the runtime refuses the exec
// of the agent's own kill, as Docker does when a fork bomb has taken every
// pid of the sandbox.
type deafAgent struct{ runtime.Full }

func (d deafAgent) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	if len(o.Cmd) >= 2 && o.Cmd[0] == runtime.AgentPath && o.Cmd[1] == "kill" {
		return 126, errors.New("OCI runtime exec failed: resource temporarily unavailable")
	}
	return d.Full.Exec(ctx, id, o)
}

func (d deafAgent) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	if len(cmd) != 2 || cmd[0] != runtime.AgentPath || cmd[1] != "serve" {
		return d.Full.ExecStream(ctx, id, user, cmd)
	}
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
				switch req.Op {
				case wire.OpHello:
					_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Version: wire.Version, Pid: 1})
				case wire.OpSpawn:
					_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Pid: 2})
				}
				_, _ = io.Copy(io.Discard, st) // and nothing more
			}()
		}
	}()
	return pipeConn{a}, nil
}

// pipeConn is one end of a net.Pipe as a runtime.ExecConn.
type pipeConn struct{ net.Conn }

func (p pipeConn) CloseWrite() error                       { return p.Conn.Close() }
func (pipeConn) Started(context.Context) error             { return nil }
func (pipeConn) Stderr() string                            { return "" }
func (pipeConn) ExitCode(ctx context.Context) (int, error) { return 0, nil }

// TestTimeoutRestartsASandboxWhoseAgentDoesNotAnswer: the limits hold from
// outside: a call's timeout ends it whatever its sandbox's agent says, and
// when neither the agent nor an exec of its own kill can end what the call
// started, the sandbox is restarted, which ends it; its files are kept and
// the result says so.
func TestTimeoutRestartsASandboxWhoseAgentDoesNotAnswer(t *testing.T) {
	te := newTestEngineNoLink(t, func(d runtime.Full) runtime.Full { return deafAgent{d} })
	te.attachFirst = false // the session is the runtime's exec: the deaf agent
	id := te.create(t, sandbox.CreateRequest{}).ID
	raw := func(cmd string) string {
		var out bytes.Buffer
		if _, err := te.docker.Exec(context.Background(), id, runtime.ExecOptions{Cmd: []string{"sh", "-c", cmd}, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	raw("echo kept > /workspace/file; sleep 600 >/dev/null 2>&1 &")
	out, err := te.ExecCommand(context.Background(), te.owner, id, sandbox.CommandRequest{Command: "sleep 600", Timeout: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Result.TimedOut || !strings.Contains(out.Result.Stderr, "so it was restarted; its files are kept") {
		t.Fatalf("the result does not say the sandbox was restarted: %+v", out.Result)
	}
	if got := raw("cat /workspace/file; ps -eo args= | grep -c '^sleep 600' || true"); got != "kept\n0\n" {
		t.Errorf("after the restart: %q, want the file kept and no sleep 600 left", got)
	}
}
