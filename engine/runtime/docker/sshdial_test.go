package docker

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestSSHTargetArgs(t *testing.T) {
	tests := []struct {
		host string
		want []string // after the fixed "-o ConnectTimeout=30 -T"
	}{
		{"ssh://box", []string{"--", "box", "docker", "system", "dial-stdio"}},
		{"ssh://me@box:2222", []string{"-l", "me", "-p", "2222", "--", "box", "docker", "system", "dial-stdio"}},
		{"ssh://me@[::1]:22", []string{"-l", "me", "-p", "22", "--", "::1", "docker", "system", "dial-stdio"}},
		{"ssh://me@box/run/user/1000/docker.sock", []string{"-l", "me", "--", "box", "docker", "--host", "unix:///run/user/1000/docker.sock", "system", "dial-stdio"}},
	}
	for _, tc := range tests {
		target, err := parseSSH(tc.host)
		if err != nil {
			t.Errorf("parseSSH(%q): %v", tc.host, err)
			continue
		}
		want := append([]string{"-o", "ConnectTimeout=30", "-T"}, tc.want...)
		if got := target.args(); !slices.Equal(got, want) {
			t.Errorf("%s: ssh %q, want %q", tc.host, got, want)
		}
	}
}

func TestSSHTargetRefusesWhatSSHWouldMisread(t *testing.T) {
	for host, why := range map[string]string{
		"ssh://me:secret@box":    "password",
		"ssh://":                 "names no host",
		"ssh://-oProxyCommand=x": "start with '-'",
		"ssh://box?x=1":          "query",
		"tcp://box":              "not an ssh",
	} {
		if _, err := parseSSH(host); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("parseSSH(%q) = %v, want an error about %q", host, err, why)
		}
	}
}

// TestSSHFailureSaysWhatSSHSaid: when ssh cannot reach the host, the error
// names the endpoint and carries ssh's own message, so a person can fix
// their ssh setup.
func TestSSHFailureSaysWhatSSHSaid(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client: apt-get install openssh-client")
	}
	env := fakeEnv(t, "linux", map[string]string{"DOCKER_HOST": "ssh://nobody@127.0.0.1:1"})
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	_, err := connect(ctx, env, "")
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "ssh://nobody@127.0.0.1:1") ||
		!strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("err = %v, want ErrUnavailable naming the host with ssh's \"Connection refused\"", err)
	}
}

// TestSSHRemoteCommandSurvivesTheRemoteShell (F40): ssh joins the remote
// command's words with spaces and the remote user's shell splits them
// again. A socket path with spaces, quotes, ';' or '$(…)' must reach docker
// as one argument and run nothing. The remote shell here is the local sh,
// with docker a function that prints its arguments.
func TestSSHRemoteCommandSurvivesTheRemoteShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	for _, socket := range []string{
		"/run/user/1000/docker.sock",
		"/run/my docker/docker.sock",
		"/run/it's/docker.sock",
		`/run/"q"/docker.sock`,
		"/run/x;touch " + dir + "/pwned;/docker.sock",
		"/run/$(touch " + dir + "/pwned)/`touch " + dir + "/pwned`/d.sock",
		"/run/a\\b/*/d.sock",
	} {
		raw := (&url.URL{Scheme: "ssh", User: url.User("me"), Host: "box", Path: socket}).String()
		target, err := parseSSH(raw)
		if err != nil {
			t.Fatalf("parseSSH(%q): %v", raw, err)
		}
		args := target.args()
		remote := args[slices.Index(args, "box")+1:]
		script := `docker() { for a; do printf '%s\0' "$a"; done; }; ` + strings.Join(remote, " ")
		cmd := exec.Command(sh, "-c", script)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("socket %q: the remote shell failed on %q: %v", socket, strings.Join(remote, " "), err)
			continue
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		want := []string{"--host", "unix://" + socket, "system", "dial-stdio"}
		if !slices.Equal(got, want) {
			t.Errorf("socket %q: docker got %q, want %q", socket, got, want)
		}
		if _, err := os.Stat(dir + "/pwned"); err == nil {
			t.Fatalf("socket %q: the path ran a command on the remote host", socket)
		}
	}
}
