package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/dockertest"
)

// TestDoctor runs `sandtray doctor` as a user would: it exits 0 on a machine
// where Sandtray can work, and 1 naming Docker, with a fix, when DOCKER_HOST
// points at nothing.
func TestDoctor(t *testing.T) {
	image := dockertest.Image(t) // a daemon answers and has the test image
	env, _ := userEnv(t, image)
	out, err := doctorRun(env)
	if err != nil {
		t.Fatalf("doctor on a working machine: %v\n%s", err, out)
	}
	for _, want := range []string{"ok    docker", "API ", "storage ", "ok    image    " + image + ": present", "ok    config", "ok    socket", "Sandtray can work"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	dead := "unix://" + filepath.Join(t.TempDir(), "nothing.sock")
	out, err = doctorRun(append(env, "DOCKER_HOST="+dead))
	if code := exitStatus(err); code != 1 {
		t.Errorf("doctor with DOCKER_HOST=%s: exit %d, want 1\n%s", dead, code, out)
	}
	for _, want := range []string{"FAIL  docker", dead, "DOCKER_HOST", "fix: start Docker", "cannot work"} {
		if !strings.Contains(out, want) {
			t.Errorf("report with Docker gone lacks %q:\n%s", want, out)
		}
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
	for _, want := range []string{"FAIL  config", "limits.pids", "FAIL  client   Claude Code", "/gone/sandtray-mcp", "fix: sandtray install claude-code"} {
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
