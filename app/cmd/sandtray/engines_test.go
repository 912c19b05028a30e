package main

import (
	"github.com/sandtray/sandtray/engine/runtime"

	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/test/dockertest"
)

// TestEngineEndToEnd is the MCP flow a user's client runs, against whichever
// Docker engine this process finds: the local Docker in `make test`,
// Podman's compat API in `make test-podman` (DOCKER_HOST set by the target),
// and a "remote" Docker over ssh in TestEngineEndToEndOverSSH.
func TestEngineEndToEnd(t *testing.T) {
	log := endToEnd(t, nil)
	if !strings.Contains(log, "docker endpoint chosen") {
		t.Errorf("the engine's log does not say which Docker it chose:\n%s", log)
	}
}

// endToEnd runs `sandtray serve --stdio` with extra environment and drives
// it: create, run Python and bash, files both ways, the sandbox's hardening
// as the engine's daemon records it, and cleanup.
// It returns the engine's log.
func endToEnd(t *testing.T, extraEnv []string) string {
	image := dockertest.Image(t)
	api := dockertest.Client(t)
	env, root := userEnv(t, image)
	cmd := exec.Command(binary, "serve", "--stdio")
	cmd.Env = append(env, extraEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "engines-test", Version: "1.0"}, nil)
	session, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, s: session, ids: map[string]bool{}}
	t.Cleanup(func() { session.Close() })

	made := c.call("create_sandbox", map[string]any{"name": "e2e"})
	id := made["sandbox_id"].(string)
	for _, r := range []struct{ lang, code, want string }{
		{"python", "import sys; print(sum(range(10)), sys.version_info[0])", "45 3\n"},
		{"bash", "echo $((6*7)) ${BASH_VERSINFO[0]}", "42 5\n"},
	} {
		out := c.call("execute_code", map[string]any{"sandbox_id": id, "language": r.lang, "code": r.code})
		if out["exit_code"] != float64(0) || out["stdout"] != r.want {
			t.Errorf("%s: %v, want stdout %q", r.lang, out, r.want)
		}
	}
	c.call("write_file", map[string]any{"sandbox_id": id, "path": "in/hello.txt", "content": "hello\n"})
	if out := c.call("read_file", map[string]any{"sandbox_id": id, "path": "in/hello.txt"}); out["content"] != "hello\n" {
		t.Errorf("read_file: %v", out)
	}
	os.WriteFile(filepath.Join(root, "data.csv"), []byte("a,b\n1,2\n"), 0o644)
	c.call("copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": filepath.Join(root, "data.csv"), "path": "in/data.csv"})
	c.call("copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "in", "host_path": filepath.Join(root, "out")})
	if b, err := os.ReadFile(filepath.Join(root, "out", "data.csv")); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("round trip through the sandbox: %q, %v", b, err)
	}
	if out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "sleep 60", "timeout_s": 1}); out["timed_out"] != true {
		t.Errorf("a command that never ends: %v", out)
	}

	// What the code inside sees: no capability at all (bounding set empty),
	// and the open-file and process limits.
	if out := c.call("execute_command", map[string]any{"sandbox_id": id,
		"command": "grep CapBnd /proc/self/status; bash -c 'ulimit -n; ulimit -u'"}); out["stdout"] != "CapBnd:\t0000000000000000\n4096\n8192\n" {
		t.Errorf("inside the sandbox: %q, want no capabilities, nofile 4096, nproc 8192", out["stdout"])
	}
	raw, err := api.InspectRaw(ctx, id)
	if err != nil {
		t.Fatalf("inspect the sandbox through the API: %v", err)
	}
	checkHardening(t, raw)

	c.call("delete_sandbox", map[string]any{"sandbox_id": id})
	if _, err := api.InspectRaw(ctx, id); err == nil {
		t.Error("delete_sandbox left the container")
	}
	def := c.call("execute_code", map[string]any{"code": "print('default')"})
	defID := def["sandbox_id"].(string)
	if err := session.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if _, err := api.InspectRaw(ctx, defID); err == nil {
		t.Error("the session's ephemeral default sandbox outlived the server")
	}
	if t.Failed() {
		t.Logf("engine log:\n%s", stderr.String())
	}
	return stderr.String()
}

// defaultCaps are the capabilities Docker and Podman give a container
// unless told otherwise.
var defaultCaps = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// onlyAgentBinds: no bind but the agent's volume at runtime.AgentDir and
// the sandbox's link folder (of the engine's state dir) at runtime.LinkDir,
// both read-only.
func onlyAgentBinds(binds []string) bool {
	agent := 0
	for _, b := range binds {
		switch {
		case strings.HasPrefix(b, "sandtray-agent-") && strings.Contains(b, ":"+runtime.AgentDir+":ro"):
			agent++
		case strings.Contains(b, "/link/") && strings.Contains(b, ":"+runtime.LinkDir+":ro"):
		default:
			return false
		}
	}
	return agent <= 1
}

// checkHardening reads the daemon's record of a sandbox: what the security
// defaults (docs/security.md) promise must be there, whichever engine
// created it.
func checkHardening(t *testing.T, raw []byte) {
	t.Helper()
	var doc struct {
		HostConfig struct {
			CapDrop     []string
			SecurityOpt []string
			Privileged  bool
			NetworkMode string
			Memory      int64
			PidsLimit   *int64
			Init        *bool
			Binds       []string
			Ulimits     []struct{ Name string }
			LogConfig   struct{ Type string }
		}
		Config struct {
			StdinOnce bool
			Cmd       []string
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	h := doc.HostConfig
	// Podman records the capabilities it dropped one by one, and ulimits as
	// RLIMIT_NOFILE; Docker records "ALL" and "nofile".
	allDropped := slices.ContainsFunc(h.CapDrop, func(s string) bool { return strings.EqualFold(strings.TrimPrefix(s, "CAP_"), "ALL") })
	if !allDropped {
		allDropped = true
		for _, c := range defaultCaps {
			allDropped = allDropped && slices.ContainsFunc(h.CapDrop, func(s string) bool { return strings.TrimPrefix(s, "CAP_") == c })
		}
	}
	var ulimits []string
	for _, u := range h.Ulimits {
		ulimits = append(ulimits, strings.ToLower(strings.TrimPrefix(u.Name, "RLIMIT_")))
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"every capability dropped", allDropped},
		{"no-new-privileges", slices.ContainsFunc(h.SecurityOpt, func(s string) bool { return strings.HasPrefix(s, "no-new-privileges") })},
		{"not privileged", !h.Privileged},
		{"network none", h.NetworkMode == "none"},
		{"a memory limit", h.Memory > 0},
		{"a pids limit", h.PidsLimit != nil && *h.PidsLimit > 0},
		// the agent, from its read-only volume, with no other init
		{"the agent as init", slices.Equal(doc.Config.Cmd, []string{runtime.AgentPath, "init"}) && h.LogConfig.Type == "none"},
		// Podman lists the mounts among the binds: the agent's volume, and
		// the sandbox's link folder on the engine's own host, both read-only
		{"no binds but the agent's and the link", onlyAgentBinds(h.Binds)},
		{"nofile and nproc limits", slices.Contains(ulimits, "nofile") && slices.Contains(ulimits, "nproc")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("hardening: want %s; HostConfig %+v", c.what, h)
		}
	}
}

// TestEngineEndToEndOverSSH runs the flow against this machine's Docker
// reached the way a remote one is: DOCKER_HOST=ssh://user@127.0.0.1:port
// through an sshd the test starts on a loopback port, with a throwaway host
// key and user key, and an ssh in PATH that reads the test's own ssh config
// (as a user's ~/.ssh/config would be read).
func TestEngineEndToEndOverSSH(t *testing.T) {
	dockertest.Image(t) // skips (or fails under SANDTRAY_REQUIRE_DOCKER) without a local daemon
	host := startSSHD(t)
	t.Setenv("DOCKER_HOST", host.dockerHost)
	t.Setenv("PATH", host.pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	log := endToEnd(t, []string{"DOCKER_HOST=" + host.dockerHost, "PATH=" + os.Getenv("PATH")})
	if want := "docker endpoint chosen\" host=" + host.dockerHost; !strings.Contains(log, want) {
		t.Errorf("the engine's log does not say it used %s:\n%s", host.dockerHost, log)
	}
}
