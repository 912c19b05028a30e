package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// execCounter counts the runtime's execs (a session's start is one).
type execCounter struct {
	runtime.Full
	n *atomic.Int32
}

func (c execCounter) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	c.n.Add(1)
	return c.Full.Exec(ctx, id, o)
}

func (c execCounter) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	c.n.Add(1)
	return c.Full.ExecStream(ctx, id, user, cmd)
}

// processesOf is `ps -eo pid,ppid,stat,args` in sandbox id, through Docker.
func (te *testEngine) processesOf(t *testing.T, id string) string {
	t.Helper()
	var out bytes.Buffer
	if _, err := te.docker.Exec(context.Background(), id, runtime.ExecOptions{Cmd: []string{"ps", "-eo", "pid,ppid,stat,args"}, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// pid1 is what the sandbox says of its PID 1: its command line and its
// start time (field 22 of its stat).
func (te *testEngine) pid1(t *testing.T, id string) (cmdline, start string) {
	t.Helper()
	r := te.command(t, id, `tr '\0\n' '  ' </proc/1/cmdline; echo; read -r s </proc/1/stat; set -- ${s##*) }; echo "${20}"`)
	lines := strings.Split(r.Stdout, "\n")
	if len(lines) < 2 {
		t.Fatalf("PID 1: %+v", r)
	}
	return strings.TrimSpace(lines[0]), lines[1]
}

// TestAgentServesANewSandboxWithoutExecs: a new sandbox's PID 1 is the
// agent, attached before its start, and its commands, files and code need
// no docker exec at all; the container logs nothing.
func TestAgentServesANewSandboxWithoutExecs(t *testing.T) {
	var execs atomic.Int32
	// The attachment: where the engine cannot link (TestSessionsTakeTheLink).
	te := newTestEngineNoLink(t, func(d runtime.Full) runtime.Full { return execCounter{d, &execs} })
	te.attachFirst = true // also where the daemon is not Docker Engine (engine.go)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	if cmd, _ := te.pid1(t, id); cmd != runtime.AgentPath+" init" {
		t.Errorf("PID 1 runs %q, want the agent", cmd)
	}
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "a.txt", Data: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
	if f, err := te.ReadFile(ctx, te.owner, id, "a.txt", 0, 0); err != nil || string(f.Data) != "hi" {
		t.Errorf("read_file = %q, %v", f.Data, err)
	}
	if _, err := te.ListFiles(ctx, te.owner, id, ".", 1, false); err != nil {
		t.Fatal(err)
	}
	if r := te.code(t, id, sandbox.CodeRequest{Code: "print(6*7)"}); r.Stdout != "42\n" {
		t.Errorf("execute_code: %+v", r)
	}
	if n := execs.Load(); n != 0 {
		t.Errorf("%d docker execs for a command, three file tools and code in a new sandbox, want none", n)
	}
	raw, err := te.docker.InspectRaw(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HostConfig struct{ LogConfig struct{ Type string } }
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.HostConfig.LogConfig.Type != "none" {
		t.Errorf("the container logs to %q, want none: %v", doc.HostConfig.LogConfig.Type, err)
	}
}

// forgeFromInside tries, as a model would (as root), to reach the engine's
// session through the agents' descriptors and memory, and to change the
// agent.
const forgeFromInside = `for p in $(ls /proc | grep '^[0-9]'); do
  [ "$p" = $$ ] && continue
  case "$(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)" in *sandtray-agent*) ;; *) continue;; esac
  for f in 0 1 2; do (printf 'garbage' > /proc/$p/fd/$f) 2>/dev/null && echo "opened $p/$f"; done
  cat /proc/$p/mem >/dev/null 2>&1 && echo "mem $p readable"
  ls -l /proc/$p/fd/ 2>/dev/null | grep -q -e pipe -e socket && echo "fd links of $p readable"
  cat /proc/$p/environ >/dev/null 2>&1 && echo "environ of $p readable"
done
(echo x > /.sandtray/sandtray-agent) 2>/dev/null && echo "agent writable"
(rm -f /.sandtray/sandtray-agent) 2>/dev/null && echo "agent removable"
(chmod 777 /.sandtray/sandtray-agent) 2>/dev/null && echo "agent chmod"
(mount -o remount,rw /.sandtray) 2>/dev/null && echo "remounted"
echo done`

// TestNoProcessReachesTheAgent: neither a command nor a kernel's code, as
// root, can write into an agent's stdin or stdout, read its memory, its
// descriptors' links or its environment, change the agent's program, or
// write to the sandbox's link; the session goes on. Every kind of session:
// PID 1's link, PID 1's attachment made at the sandbox's creation, and an
// exec's.
func TestNoProcessReachesTheAgent(t *testing.T) {
	linked, unlinked := newTestEngine(t), newTestEngineNoLink(t, nil)
	for _, c := range []struct {
		session  string
		te       *testEngine
		attached bool
	}{{"link", linked, false}, {"attachment", unlinked, true}, {"exec", unlinked, false}} {
		te := c.te
		te.attachFirst = c.attached
		id := te.create(t, sandbox.CreateRequest{}).ID
		te.command(t, id, "true")
		forge := forgeFromInside + "\n(touch " + runtime.LinkDir + "/x) 2>/dev/null && echo 'link writable'"
		if r := te.command(t, id, forge); !strings.HasPrefix(r.Stdout, "done\n") || strings.Count(r.Stdout, "\n") != 1 {
			t.Errorf("%s, from a command: %q", c.session, r.Stdout)
		}
		code := "import subprocess\nprint(subprocess.run(['sh', '-c', " + strconv.Quote(forge) + "], capture_output=True, text=True).stdout)"
		if r := te.code(t, id, sandbox.CodeRequest{Code: code}); strings.TrimSpace(r.Stdout) != "done" {
			t.Errorf("%s, from a kernel: %+v", c.session, r)
		}
		if r := te.command(t, id, "echo still served"); r.Stdout != "still served\n" {
			t.Errorf("%s, after the attempts: %+v", c.session, r)
		}
	}
}

// TestTheAgentStaysPID1AfterARestart: whatever the model replaces (the
// image's shell, its python3), a sandbox started again has the agent as
// PID 1, from its read-only volume: the same program the engine gave it.
// What the disk watch and the install's freeze spare is always the agent.
func TestTheAgentStaysPID1AfterARestart(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{Persistent: true}).ID
	r := te.command(t, id, `set -e; printf '#!/usr/bin/dash\necho impostor >> /tmp/ran\n' > /tmp/x; chmod 755 /tmp/x
cp /tmp/x /usr/local/bin/python3; cp /usr/bin/dash /tmp/dash; cp /tmp/x /usr/local/bin/sh; echo replaced`)
	if r.Stdout != "replaced\n" {
		t.Fatalf("replace the sandbox's programs: %+v", r)
	}
	_, before := te.pid1(t, id)
	if _, err := te.Stop(ctx, te.owner, id); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the sandbox started again", func() bool {
		out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "echo up"})
		return err == nil && out.Result.Stdout == "up\n"
	})
	cmd, after := te.pid1(t, id)
	if cmd != runtime.AgentPath+" init" || after == before {
		t.Errorf("after a restart PID 1 runs %q (started at %s, before %s), want the agent, started again", cmd, after, before)
	}
	h := sha256.New()
	for off := int64(0); ; {
		f, err := te.ReadFile(ctx, te.owner, id, runtime.AgentPath, off, 0)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(f.Data)
		if off += int64(len(f.Data)); !f.Truncated || len(f.Data) == 0 {
			break
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != te.Engine.cfg().agent.Digest {
		t.Errorf("the agent in the sandbox has digest %s, the engine's %s", got, te.Engine.cfg().agent.Digest)
	}
	b, _ := te.reg.BoxOf(id)
	if pid1, err := te.initOf(ctx, b); err != nil || !pid1.Ours {
		t.Errorf("the engine's view of PID 1 after a restart: %+v, %v; want its own", pid1, err)
	}
}

// TestAKilledAgentComesBack: the model kills the agent that serves its
// sandbox's session (one made with an exec, as after a restart or on
// Podman): the call that did it fails with a clear error, what it started
// is killed, and the next call works; another sandbox never notices.
func TestAKilledAgentComesBack(t *testing.T) {
	te := newTestEngineNoLink(t, nil) // PID 1's link cannot be killed from inside
	te.attachFirst = false
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	other := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, other, "true")
	_, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "sleep 300 & pkill -9 -f 'sandtray-agent serve'; sleep 5"})
	if err == nil || !strings.Contains(err.Error(), "agent") {
		t.Errorf("the call that killed its agent: %v, want an error naming the agent", err)
	}
	eventually(t, 30*time.Second, "the next call to work", func() bool {
		out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "echo back"})
		return err == nil && out.Result.Stdout == "back\n"
	})
	eventually(t, 30*time.Second, "what the call left running to be killed", func() bool {
		return !strings.Contains(te.processesOf(t, id), "sleep 300")
	})
	if r := te.command(t, other, "echo fine"); r.Stdout != "fine\n" {
		t.Errorf("the other sandbox: %+v", r)
	}
}

// TestTimeoutSweepsAForkBomb: a fork bomb that takes every pid of its
// sandbox is ended at its timeout by the agent, which needs no new process
// to kill it; the sandbox keeps running, with its files.
func TestTimeoutSweepsAForkBomb(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "echo kept > /workspace/file")
	out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "f() { f | f & }; f; exec sleep 600", Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Result.TimedOut {
		t.Fatalf("the fork bomb's call: %+v", out.Result)
	}
	eventually(t, 60*time.Second, "the sandbox to serve again, its file kept", func() bool {
		out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "cat /workspace/file"})
		return err == nil && out.Result.Stdout == "kept\n"
	})
	if n := strings.Count(te.processesOf(t, id), "\n"); n > 10 {
		t.Errorf("%d processes left after the fork bomb's call:\n%s", n, te.processesOf(t, id))
	}
	if !strings.Contains(out.Result.Stderr, "timed out") {
		t.Errorf("stderr %q does not say the call timed out", out.Result.Stderr)
	}
}

// TestAStoppedSandboxStaysStopped: a background job whose sandbox is
// stopped ends with it, and does not start the sandbox again (its session
// ended under it: the error is not a "not running" to recover from).
func TestAStoppedSandboxStaysStopped(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "sleep 600", Background: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := te.Stop(ctx, te.owner, id); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the job to end with its sandbox", func() bool {
		st, err := te.JobStatus(ctx, out.JobID, -1)
		return err == nil && st.Status != "running"
	})
	if c, err := te.docker.Inspect(ctx, id); err != nil || c.State == "running" {
		t.Errorf("after its job ended, the stopped sandbox is %q (%v): the job started it again", c.State, err)
	}
}
