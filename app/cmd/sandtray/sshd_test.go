package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sshHost is an sshd on a loopback port that lets this user in with a key.
type sshHost struct {
	dockerHost string // ssh://user@127.0.0.1:port
	pathDir    string // a directory with an `ssh` that uses the test's config
}

// startSSHD starts sshd for the test on a free loopback port, stopped at
// cleanup. It skips, saying why, where OpenSSH's server or client is not
// installed (`make test` installs them).
func startSSHD(t *testing.T) sshHost {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	sshPath, sshErr := exec.LookPath("ssh")
	if _, err := os.Stat(sshd); err != nil || sshErr != nil {
		t.Skip("OpenSSH (sshd and ssh) is not installed: apt-get install openssh-server openssh-client")
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keygen := func(name string) {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sandtray-test", "-f", filepath.Join(dir, name)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	keygen("host_key")
	keygen("user_key")
	copyFile(t, filepath.Join(dir, "user_key.pub"), filepath.Join(dir, "authorized_keys"))
	if os.Geteuid() == 0 {
		os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation directory
	}
	port := freePort(t)
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %[2]s/host_key
AuthorizedKeysFile %[2]s/authorized_keys
PidFile %[2]s/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
LogLevel ERROR
`, port, dir)
	writeTestFile(t, filepath.Join(dir, "sshd_config"), config)
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("sshd log:\n%s", log.String())
		}
	})
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", port), exited, &log)

	hostPub, err := os.ReadFile(filepath.Join(dir, "host_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "known_hosts"), fmt.Sprintf("[127.0.0.1]:%d %s", port, hostPub))
	writeTestFile(t, filepath.Join(dir, "ssh_config"), fmt.Sprintf(`Host 127.0.0.1
  IdentityFile %[1]s/user_key
  IdentitiesOnly yes
  UserKnownHostsFile %[1]s/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR
`, dir))
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o700)
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %s -F %s \"$@\"\n", sshPath, filepath.Join(dir, "ssh_config"))
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	return sshHost{dockerHost: fmt.Sprintf("ssh://%s@127.0.0.1:%d", me.Username, port), pathDir: bin}
}

// freePort is a loopback port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitListening waits until addr accepts connections, or fails the test
// when sshd exits first or takes more than ten seconds.
func waitListening(t *testing.T, addr string, exited <-chan struct{}, log *strings.Builder) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("sshd exited: %s", log.String())
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd does not listen on %s", addr)
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, to, string(b))
}
