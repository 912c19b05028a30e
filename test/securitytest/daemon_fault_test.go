//go:build fault

package securitytest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testbuild"
	"github.com/sandtray/sandtray/test/dockertest"
)

// These tests restart, freeze and kill things every other test depends on:
// run them alone (make test-fault: -tags fault -p 1).

// dockerdPid returns the pid of the running dockerd, or 0.
func dockerdPid(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("pgrep", "-x", "dockerd").Output()
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.Fields(string(out))[0])
	return pid
}

// requireDockerdControl skips unless this process may signal a dockerd that
// runs as a plain process on this machine (root, no systemd unit to fight).
func requireDockerdControl(t *testing.T) int {
	t.Helper()
	dockertest.Client(t)
	pid := dockerdPid(t)
	if pid == 0 || os.Geteuid() != 0 {
		t.Skip("fault tests need root and a local dockerd process to restart and freeze")
	}
	t.Cleanup(func() { ensureDockerd(t) })
	return pid
}

// ensureDockerd resumes or starts dockerd, whatever state a test left it in.
func ensureDockerd(t *testing.T) {
	if pid := dockerdPid(t); pid != 0 {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	} else {
		startDockerd(t)
	}
	waitDocker(t)
}

// restartDockerd stops dockerd as a service manager would (SIGTERM: it stops
// the containers, whose restart policy is "no") and starts it again.
func restartDockerd(t *testing.T) {
	t.Helper()
	pid := dockerdPid(t)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stop dockerd: %v", err)
	}
	eventually(t, 60*time.Second, fmt.Sprintf("dockerd %d did not stop within 60 s", pid), func() bool {
		return syscall.Kill(pid, 0) != nil
	})
	startDockerd(t)
	waitDocker(t)
}

// startDockerd starts dockerd as the Makefile does, through a shell that
// exits at once, so dockerd is not this test's child: the test neither has
// to reap it nor takes it down when it ends.
func startDockerd(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "setsid dockerd >>/tmp/dockerd.log 2>&1 </dev/null &")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("start dockerd: %v: %s", err, out)
	}
}

func waitDocker(t *testing.T) {
	eventually(t, 60*time.Second, "dockerd did not answer within 60 s", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := docker.New(ctx)
		cancel()
		if err != nil {
			t.Logf("dockerd not answering yet: %v", err)
			return false
		}
		c.Close()
		return true
	})
}

// newDocker is a client of the daemon for the test, closed when it ends.
func newDocker(t *testing.T) *docker.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dc, err := docker.New(ctx)
	if err != nil {
		t.Fatalf("docker: %v", err)
	}
	t.Cleanup(func() { dc.Close() })
	return dc
}

// waitRunning waits until a process whose command line contains pattern
// runs in the container: the call that starts it is under way. It asks the
// daemon directly, not the engine, whose calls to that sandbox are busy.
func waitRunning(t *testing.T, dc *docker.Client, id, pattern string) {
	t.Helper()
	eventually(t, 30*time.Second, "no process "+pattern+" started in "+id, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		code, err := dc.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"pgrep", "-f", pattern}, Stdout: io.Discard, Stderr: io.Discard})
		return err == nil && code == 0
	})
}

// TestFaultDaemonRestartIdle: the engine reconnects and re-adopts; the
// sandboxes it had are still there once (stopped), and work on next use.
func TestFaultDaemonRestartIdle(t *testing.T) {
	requireDockerdControl(t)
	e := newEnv(t)
	persistent := e.client.sandbox(t, map[string]any{"persistent": true})
	ephemeral := e.client.sandbox(t, nil)
	restartDockerd(t)
	snapshotShows(t, e, 30*time.Second, "Docker connected again with both sandboxes", func(s sandbox.Snapshot) bool {
		_, p := statusIn(s, persistent)
		_, q := statusIn(s, ephemeral)
		return s.Docker.Connected && p && q && len(s.Sandboxes) == 2
	})
	for _, id := range []string{persistent, ephemeral} {
		if out := e.client.command(t, id, "echo again", 30); strings.TrimSpace(out.stdout) != "again" {
			t.Errorf("sandbox %s after a daemon restart: %s", id, out.text)
		}
	}
	if n := len(e.client.ok(t, "list_sandboxes", nil).data["sandboxes"].([]any)); n != 2 {
		t.Errorf("list_sandboxes shows %d sandboxes after the restart, want 2", n)
	}
	if n := containersOf(t, e.labels); n != 2 {
		t.Errorf("%d containers after the restart, want 2", n)
	}
}

// TestFaultDaemonRestartMidExec: a call running when the daemon goes down
// fails with a clear error rather than hanging or claiming success.
func TestFaultDaemonRestartMidExec(t *testing.T) {
	requireDockerdControl(t)
	e := newEnv(t)
	id := e.client.sandbox(t, map[string]any{"persistent": true})
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		done <- e.client.callCtx(ctx, "execute_command", map[string]any{"sandbox_id": id, "command": "sleep 20; echo finished", "timeout_s": 60})
	}()
	waitRunning(t, e.docker, id, "sleep 20")
	restartDockerd(t)
	var r result
	select {
	case r = <-done:
	case <-time.After(callTimeout):
		t.Fatal("the in-flight call never returned after the daemon restarted")
	}
	t.Logf("in-flight call: %v", r)
	if r.err == nil && !r.isError && strings.Contains(r.str("stdout"), "finished") && r.num("exit_code") == 0 {
		t.Errorf("the in-flight call claims it finished although the daemon restarted under it: %v", r)
	}
	msg := strings.ToLower(r.text)
	if r.err != nil {
		msg = strings.ToLower(r.err.Error())
	}
	if r.err != nil || r.isError {
		if !strings.Contains(msg, "docker") && !strings.Contains(msg, "daemon") && !strings.Contains(msg, "sandbox") {
			t.Errorf("the in-flight call's error does not say what failed: %v", r)
		}
	} else if code := int(r.num("exit_code")); code == 0 {
		t.Errorf("the in-flight call reports exit 0: %v", r)
	}
	// The engine learns the container stopped when it has resynced; a call
	// in the fraction of a second before that fails with "is not running"
	// (reported to the lead: exec could start the sandbox and retry).
	snapshotShows(t, e, 30*time.Second, "the sandbox stopped with the daemon", func(s sandbox.Snapshot) bool {
		st, ok := statusIn(s, id)
		return s.Docker.Connected && ok && st == sandbox.StatusStopped
	})
	if out := e.client.command(t, id, "echo again", 30); strings.TrimSpace(out.stdout) != "again" {
		t.Errorf("after the restart: %s", out.text)
	}
	if n := containersOf(t, e.labels); n != 1 {
		t.Errorf("%d containers after the restart, want 1", n)
	}
}

// TestFaultDaemonFrozen: with dockerd stopped by SIGSTOP, calls that need
// it end at their timeout (or the client's) instead of hanging, calls that
// do not need it still answer, and all is well after SIGCONT. A sandbox
// whose session runs on its link needs no daemon for a command or a file:
// those answer at once; over the attachment and execs (an engine that does
// not link) they need the daemon.
func TestFaultDaemonFrozen(t *testing.T) {
	pid := requireDockerdControl(t)
	for _, linked := range []bool{true, false} {
		t.Run(map[bool]string{true: "link", false: "no link"}[linked], func(t *testing.T) {
			e := newEnvWith(t, engine.Options{NoLink: !linked})
			id := e.client.sandbox(t, nil)
			e.client.command(t, id, "true", 10) // its session, before the freeze
			frozen(t, pid, e, id, linked)
		})
	}
}

// frozen freezes dockerd (pid) and tries sandbox id of e; linked says
// whether its session is on its link, which needs no daemon.
func frozen(t *testing.T, pid int, e *env, id string, linked bool) {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			syscall.Kill(pid, syscall.SIGCONT)
			thawed = true
		}
	}
	defer thaw()

	start := time.Now()
	r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": "echo hi", "timeout_s": 2})
	took := time.Since(start)
	t.Logf("exec against a frozen daemon, after %s: %v", took, r)
	if took > 30*time.Second {
		t.Errorf("an exec with timeout_s 2 took %s against a frozen daemon", took)
	}
	switch {
	case linked && (r.err != nil || r.isError || strings.TrimSpace(r.str("stdout")) != "hi"):
		t.Errorf("a command over the sandbox's link, which needs no daemon, failed while it was frozen: %v", r)
	case !linked && r.err == nil && !r.isError && !r.flag("timed_out"):
		t.Errorf("an exec against a frozen daemon neither failed nor timed out: %v", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	start = time.Now()
	r = e.client.callCtx(ctx, "write_file", map[string]any{"sandbox_id": id, "path": "x", "content": "x"})
	cancel()
	switch {
	case linked && (r.err != nil || r.isError):
		t.Errorf("write_file over the sandbox's link failed while the daemon was frozen: %v", r)
	case !linked && (time.Since(start) > 10*time.Second || r.err == nil):
		t.Errorf("a call the client gave up on after 3 s returned after %s: %v", time.Since(start), r)
	}
	start = time.Now()
	e.client.ok(t, "list_sandboxes", nil)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("list_sandboxes took %s while Docker was frozen", took)
	}

	thaw()
	eventually(t, 30*time.Second, "calls work again after SIGCONT", func() bool {
		r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": "echo thawed", "timeout_s": 10})
		return strings.TrimSpace(r.str("stdout")) == "thawed"
	})
}

// TestFaultEngineKilled: kill -9 of `sandtray serve` mid-exec, then a new
// one on the same state: persistent sandboxes adopted, ephemeral ones
// reaped after their grace, nothing duplicated.
func TestFaultEngineKilled(t *testing.T) {
	image := dockertest.Image(t)
	labels := dockertest.Labels(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "sandtray")
	build := testbuild.Command(bin, "github.com/sandtray/sandtray/app/cmd/sandtray")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sandtray: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "root")
	os.MkdirAll(root, 0o700)
	config := filepath.Join(dir, "config.toml")
	os.WriteFile(config, []byte("default_image = \""+image+"\"\n[sandbox]\nsession_grace = \"1s\"\n[host]\nallowed_roots = [\""+root+"\"]\n"), 0o600)
	env := append(os.Environ(), "SANDTRAY_TEST_LABEL="+labels[sandbox.LabelTest],
		"XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"))
	serve := func() (*exec.Cmd, *sdk.ClientSession) {
		cmd := exec.Command(bin, "serve", "--stdio", "--config", config)
		cmd.Env = env
		cmd.Stderr = &testLog{t: t}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "fault", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("start sandtray serve: %v", err)
		}
		return cmd, cs
	}
	cmd, cs := serve()
	c := &client{cs: cs}
	persistent := c.sandbox(t, map[string]any{"persistent": true})
	ephemeral := c.sandbox(t, nil)
	go c.call(t, "execute_command", map[string]any{"sandbox_id": persistent, "command": "sleep 60"})
	dc := newDocker(t)
	waitRunning(t, dc, persistent, "sleep 60")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cs.Close() // the transport waits for the process

	_, cs2 := serve()
	defer cs2.Close()
	c2 := &client{cs: cs2}
	eventually(t, 15*time.Second, "the ephemeral sandbox reaped and the persistent one adopted", func() bool {
		list := c2.ok(t, "list_sandboxes", nil).data["sandboxes"].([]any)
		return len(list) == 1 && list[0].(map[string]any)["id"] == persistent
	})
	if out := c2.command(t, persistent, "echo adopted", 30); strings.TrimSpace(out.stdout) != "adopted" {
		t.Errorf("the adopted sandbox: %s", out.text)
	}
	if n := containersOf(t, labels); n != 1 {
		t.Errorf("%d containers after the restart, want 1 (ephemeral %s reaped)", n, ephemeral[:12])
	}
}

// testLog sends a child's diagnostics to the test log.
type testLog struct{ t *testing.T }

func (l *testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
