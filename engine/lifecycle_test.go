package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestSecurityDefaults inspects a fresh sandbox's container and checks every
// default docs/security.md promises.
// onlyAgentMounts: the agent's volume at runtime.AgentDir, and at most the
// sandbox's link (a folder under the engine's state dir) at
// runtime.LinkDir, both read-only; nothing else.
func onlyAgentMounts(mounts []struct {
	Type, Source, Destination string
	RW                        bool
}, stateDir string) bool {
	agent := 0
	for _, m := range mounts {
		switch {
		case m.RW:
			return false
		case m.Type == "volume" && m.Destination == runtime.AgentDir:
			agent++
		case m.Type == "bind" && m.Destination == runtime.LinkDir && strings.HasPrefix(m.Source, filepath.Join(stateDir, "link")+"/"):
		default:
			return false
		}
	}
	return agent == 1
}

func TestSecurityDefaults(t *testing.T) {
	te := newTestEngine(t)
	info := te.create(t, sandbox.CreateRequest{})
	raw, err := te.docker.InspectRaw(context.Background(), info.ID)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		HostConfig struct {
			CapDrop, CapAdd, SecurityOpt, Binds []string
			Privileged                          bool
			Init                                *bool
			LogConfig                           struct{ Type string }
			NetworkMode                         string
			Memory, MemorySwap, NanoCpus        int64
			PidsLimit                           *int64
			RestartPolicy                       struct{ Name string }
		}
		Mounts []struct {
			Type, Source, Destination string
			RW                        bool
		}
		Config struct {
			StdinOnce bool
			Cmd       []string
		}
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	h, cfg := c.HostConfig, te.cfg.Limits
	checks := []struct {
		what string
		ok   bool
	}{
		{"all capabilities dropped", slices.Contains(h.CapDrop, "ALL")},
		{"no capabilities added back", len(h.CapAdd) == 0},
		{"no-new-privileges", slices.Contains(h.SecurityOpt, "no-new-privileges")},
		{"default seccomp kept", !slices.ContainsFunc(h.SecurityOpt, func(s string) bool { return s == "seccomp=unconfined" })},
		{"not privileged", !h.Privileged},
		// the agent, from its read-only volume (TestAgentServesANewSandboxWithoutExecs)
		{"init process", slices.Equal(c.Config.Cmd, []string{runtime.AgentPath, "init"}) && h.LogConfig.Type == "none"},
		{"network none", h.NetworkMode == "none"},
		{"memory limited", h.Memory == cfg.MemoryMB<<20},
		{"no swap beyond memory", h.MemorySwap == h.Memory},
		{"cpu limited", h.NanoCpus == int64(cfg.CPUs*1e9)},
		{"pids limited", h.PidsLimit != nil && *h.PidsLimit == cfg.Pids},
		{"restart policy no", h.RestartPolicy.Name == "no" || h.RestartPolicy.Name == ""},
		{"no host mounts: the agent's volume, and the sandbox's own link folder, read-only", len(h.Binds) == 0 && onlyAgentMounts(c.Mounts, te.cfg.StateDir)},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s: not so in %s", ch.what, raw)
		}
	}
	if res := te.command(t, info.ID, "cat /proc/self/status | grep -E '^(CapEff|NoNewPrivs)'"); res.Stdout != "CapEff:\t0000000000000000\nNoNewPrivs:\t1\n" {
		t.Errorf("inside the sandbox: %q, want no effective capabilities and NoNewPrivs 1", res.Stdout)
	}
}

func TestCreateValidatesAndNames(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.AllowNetwork = true }) // a pull is tried for the absent image
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "proj-1", Persistent: true, MemoryMB: 256, Env: map[string]string{"GREETING": "hi"}})
	if info.Name != "proj-1" || !info.Persistent || info.Status != sandbox.StatusRunning || info.Owner != te.owner {
		t.Errorf("created %+v", info)
	}
	if got := te.command(t, "proj-1", "echo $GREETING").Stdout; got != "hi\n" {
		t.Errorf("env: got %q", got)
	}
	bad := []struct {
		req  sandbox.CreateRequest
		kind error
	}{
		{sandbox.CreateRequest{Name: "proj-1"}, sandbox.ErrConflict},
		{sandbox.CreateRequest{Name: "bad name!"}, sandbox.ErrInvalid},
		{sandbox.CreateRequest{Network: "host"}, sandbox.ErrInvalid},
		{sandbox.CreateRequest{MemoryMB: 1 << 30}, sandbox.ErrInvalid},
		{sandbox.CreateRequest{CPUs: 1000}, sandbox.ErrInvalid},
		{sandbox.CreateRequest{Language: "cobol"}, sandbox.ErrInvalid},
		{sandbox.CreateRequest{Env: map[string]string{"1X": "y"}}, sandbox.ErrInvalid},
		{sandbox.CreateRequest{Image: "sandtray-test/absent:never"}, sandbox.ErrNotFound},
	}
	for _, b := range bad {
		_, err := te.Create(ctx, te.owner, b.req, nil)
		wantKind(t, err, b.kind)
	}
	list, _ := te.List(ctx)
	if len(list) != 1 {
		t.Errorf("after refused creates: %d sandboxes, want 1 (nothing left behind)", len(list))
	}
	te.SetPaused(true)
	_, err := te.Create(ctx, te.owner, sandbox.CreateRequest{}, nil)
	wantKind(t, err, sandbox.ErrPaused)
}

func TestStopDeleteAndWatch(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	w := te.Watch(ctx)
	info := te.create(t, sandbox.CreateRequest{})
	waitSnapshot(t, w, "the new sandbox running", func(s sandbox.Snapshot) bool {
		return len(s.Sandboxes) == 1 && s.Sandboxes[0].ID == info.ID && s.Sandboxes[0].Status == sandbox.StatusRunning
	})
	if st, err := te.Stop(ctx, te.owner, info.Name); err != nil || st.Status != sandbox.StatusStopped {
		t.Fatalf("stop: %+v, %v", st, err)
	}
	// A stopped sandbox starts again on its next use.
	if got := te.command(t, info.ID, "echo back").Stdout; got != "back\n" {
		t.Errorf("exec after stop: %q", got)
	}
	if err := te.Delete(ctx, te.owner, info.ID); err != nil {
		t.Fatal(err)
	}
	waitSnapshot(t, w, "the deleted sandbox gone", func(s sandbox.Snapshot) bool { return len(s.Sandboxes) == 0 })
	if _, err := te.docker.Inspect(ctx, info.ID); err == nil {
		t.Error("container still exists after delete")
	}
	wantKind(t, te.Delete(ctx, te.owner, info.ID), sandbox.ErrNotFound)
}

func waitSnapshot(t *testing.T, w *Watcher, what string, cond func(sandbox.Snapshot) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		s, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for a snapshot with %s: %v", what, err)
		}
		if cond(s) {
			return
		}
	}
}

// TestRemovedBehindOurBack: a container deleted with the Docker CLI vanishes
// from the engine within two seconds, and a call naming it gets a clear error.
func TestRemovedBehindOurBack(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{})
	if err := te.docker.Remove(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	_, err := te.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: "true"})
	wantKind(t, err, sandbox.ErrNotFound)
	eventually(t, 2*time.Second, "removed sandbox still listed", func() bool {
		l, _ := te.List(ctx)
		return len(l) == 0
	})
}

// TestRestartAdoptsAndReaps: after a crash, a new engine keeps the persistent
// sandbox (with its activity log) and removes the expired ephemeral one.
func TestRestartAdoptsAndReaps(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: 0} })
	ctx := context.Background()
	keep := te.create(t, sandbox.CreateRequest{Name: "keep", Persistent: true})
	drop := te.create(t, sandbox.CreateRequest{Name: "drop"})
	te.command(t, keep.ID, "echo remembered > note.txt")
	te.stopLoops() // the process dies: nothing is cleaned up

	e2, err := newEngine(ctx, te.cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.stopLoops()
	list, _ := e2.List(ctx)
	if len(list) != 1 || list[0].ID != keep.ID || !list[0].Persistent || list[0].Owner != te.owner {
		t.Fatalf("after restart: %+v, want only the persistent sandbox, owner kept", list)
	}
	if _, err := te.docker.Inspect(ctx, drop.ID); err == nil {
		t.Error("the expired ephemeral sandbox's container still exists")
	}
	logs, _ := e2.Logs(ctx, "keep", 0)
	if len(logs) != 2 || logs[1].Input != "echo remembered > note.txt" {
		t.Errorf("activity after restart: %+v", logs)
	}
	out, err := e2.ExecCommand(ctx, te.owner, "keep", sandbox.CommandRequest{Command: "cat note.txt"})
	if err != nil || out.Result.Stdout != "remembered\n" {
		t.Errorf("file in the adopted sandbox: %+v, %v", out.Result, err)
	}
}

func TestSessionEndReapsEphemeral(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: 300 * time.Millisecond} })
	ctx := context.Background()
	eph := te.create(t, sandbox.CreateRequest{})
	per := te.create(t, sandbox.CreateRequest{Persistent: true})
	te.SessionEnded(te.owner.Session)
	eventually(t, 10*time.Second, "ephemeral sandbox not reaped after its session ended", func() bool {
		_, err := te.Get(ctx, eph.ID)
		return err != nil
	})
	if _, err := te.Get(ctx, per.ID); err != nil {
		t.Errorf("persistent sandbox was reaped: %v", err)
	}
}

func TestRemoveEphemeralKeepsPersistent(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	eph := te.create(t, sandbox.CreateRequest{})
	per := te.create(t, sandbox.CreateRequest{Persistent: true})
	if err := te.RemoveEphemeral(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := te.docker.Inspect(ctx, eph.ID); err == nil {
		t.Error("ephemeral sandbox survived RemoveEphemeral")
	}
	if _, err := te.docker.Inspect(ctx, per.ID); err != nil {
		t.Errorf("persistent sandbox removed: %v", err)
	}
}

func TestKillAndStopEphemeral(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	a := te.create(t, sandbox.CreateRequest{})
	b := te.create(t, sandbox.CreateRequest{})
	per := te.create(t, sandbox.CreateRequest{Persistent: true})
	if err := te.Kill(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if c, _ := te.docker.Inspect(ctx, a.ID); c.State != "exited" {
		t.Errorf("killed sandbox's container is %q, want exited", c.State)
	}
	if err := te.StopEphemeral(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		id     string
		status sandbox.Status
	}{{a.ID, sandbox.StatusStopped}, {b.ID, sandbox.StatusStopped}, {per.ID, sandbox.StatusRunning}} {
		if info, _ := te.Get(ctx, want.id); info.Status != want.status {
			t.Errorf("%s: %s, want %s", info.Name, info.Status, want.status)
		}
	}
}

// TestSnapshotStatusAndNotices: watchers see Docker's status, the number of
// live sessions, and a notice when a command is killed at its timeout.
func TestSnapshotStatusAndNotices(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	w := te.Watch(ctx)
	waitSnapshot(t, w, "docker connected and one session", func(s sandbox.Snapshot) bool {
		return s.Docker.Connected && s.Docker.Version != "" && s.Docker.Host != "" && s.Docker.HostSource != "" && s.Sessions == 1
	})
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "sleep 30", Timeout: 500 * time.Millisecond})
	waitSnapshot(t, w, "a timeout notice", func(s sandbox.Snapshot) bool {
		return len(s.Notices) == 1 && s.Notices[0].Seq == 1 && s.Notices[0].SandboxID == id && s.Notices[0].Title == "Command timed out"
	})
	te.SessionEnded(te.owner.Session)
	waitSnapshot(t, w, "no live session", func(s sandbox.Snapshot) bool { return s.Sessions == 0 })
}

// TestEnginesKeepToTheirOwn: an engine never adopts (or reaps) another
// engine's test containers, and an engine without a test label (a user's)
// leaves every test container alone.
func TestEnginesKeepToTheirOwn(t *testing.T) {
	te := newTestEngine(t)
	mine := te.create(t, sandbox.CreateRequest{})
	other := newTestEngine(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: 0} })
	if _, err := other.Get(context.Background(), mine.ID); err == nil {
		t.Error("a second test engine adopted the first one's sandbox")
	}
	te.stopLoops() // its process ends; a user's engine starts on its state dir
	user, err := newEngine(context.Background(), te.cfg, te.docker, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer user.stopLoops()
	if list, _ := user.List(context.Background()); slices.ContainsFunc(list, func(i sandbox.Info) bool { return i.ID == mine.ID }) {
		t.Error("an engine without a test label adopted a test container")
	}
	if _, err := te.docker.Inspect(context.Background(), mine.ID); err != nil {
		t.Errorf("the sandbox was reaped by another engine: %v", err)
	}
}

// TestStoppedBehindTheEngineStartsAgain: a sandbox stopped where the engine
// cannot see it (its events not yet arrived, as after a daemon restart) is
// started again by the next call, which then runs, instead of failing.
func TestStoppedBehindTheEngineStartsAgain(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.stopLoops() // no events: the engine still believes it runs
	if err := te.docker.Stop(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := te.command(t, id, "echo back").Stdout; got != "back\n" {
		t.Errorf("call after a stop behind the engine: %q", got)
	}
}

// TestRemovedBehindOurBackKernelPath: execute_code, which starts a kernel,
// says the sandbox no longer exists, as the exec path does.
func TestRemovedBehindOurBackKernelPath(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{})
	te.stopLoops() // the engine must find out from the call itself
	if err := te.docker.Remove(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	_, err := te.ExecCode(ctx, te.owner, info.ID, sandbox.CodeRequest{Code: "print(1)"})
	wantKind(t, err, sandbox.ErrNotFound)
}
