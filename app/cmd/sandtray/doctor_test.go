package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/test/dockertest"
)

// TestDoctor runs `sandtray doctor` as a user would: it exits 0 on a machine
// where Sandtray can work, and 1 when DOCKER_HOST points at nothing, with
// one short line naming it and one fix, no line that calls anything else
// fine that cannot work without Docker, and one summary.
func TestDoctor(t *testing.T) {
	image := dockertest.Image(t) // a daemon answers and has the test image
	env, _ := userEnv(t, image)
	out, err := doctorRun(env)
	if err != nil {
		t.Fatalf("doctor on a working machine: %v\n%s", err, out)
	}
	for _, want := range []string{"ok    docker", "API ", "storage ", "ok    image    " + image + ": present", "ok    config", "socket ", "Sandtray can work"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	dead := "unix://" + filepath.Join(t.TempDir(), "nothing.sock")
	out, err = doctorRun(append(env, "DOCKER_HOST="+dead))
	if code := exitStatus(err); code != 1 {
		t.Errorf("doctor with DOCKER_HOST=%s: exit %d, want 1\n%s", dead, code, out)
	}
	want := "FAIL  docker   no Docker engine answers at " + dead + " (DOCKER_HOST) — fix: start the engine it names, or unset DOCKER_HOST\n"
	if !strings.Contains(out, want) {
		t.Errorf("report with Docker gone lacks\n%s\nin:\n%s", want, out)
	}
	if strings.Contains(out, "ok    socket") {
		t.Errorf("the socket is ok while no engine can start:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 200 {
			t.Errorf("a line of %d characters: %s", len(line), line)
		}
	}
	cmd := exec.Command(binary, "doctor")
	cmd.Env = append(env, "DOCKER_HOST="+dead)
	all, _ := cmd.CombinedOutput()
	if n := strings.Count(string(all), "cannot work"); n != 1 || !strings.HasSuffix(string(all), "Sandtray cannot work until the FAIL line is fixed.\n") {
		t.Errorf("%d summaries; want one, last:\n%s", n, all)
	}
}

// TestDoctorFindsBrokenSetups: a config with a bad key and a client whose
// Sandtray entry runs a shim that is gone each fail the report, naming what
// to fix.
func TestDoctorFindsBrokenSetups(t *testing.T) {
	image := dockertest.Image(t)
	env, _ := userEnv(t, image)
	home := envValue(env, "HOME")
	cfg := filepath.Join(home, ".config", "sandtray", "config.toml")
	if err := os.WriteFile(cfg, []byte("default_image = \""+image+"\"\n[limits]\npids = 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(claude, []byte(`{"mcpServers":{"sandtray":{"command":"/gone/sandtray-mcp","args":[]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := doctorRun(env)
	if code := exitStatus(err); code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"FAIL  config", "limits.pids", "FAIL  client   Claude Code", "/gone/sandtray-mcp", "fix: `sandtray install claude-code`"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func doctorRun(env []string) (string, error) {
	cmd := exec.Command(binary, "doctor")
	cmd.Env = env
	out, err := cmd.Output()
	return string(out), err
}

func exitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val // the last one wins, as for exec
		}
	}
	return v
}
