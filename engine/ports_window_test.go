package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// heldApt is an apt-get of the sandbox's own whose update holds the
// install's way out open (/tmp/window) until the test releases it
// (/tmp/release), at most 30 s.
const heldApt = `#!/bin/sh
case " $* " in *" update "*) touch /tmp/window; i=0; while [ ! -e /tmp/release ] && [ $i -lt 600 ]; do i=$((i+1)); sleep 0.05; done; rm -f /tmp/window;; esac
exit 0
`

// raw runs a shell command in sandbox id past the engine: the test's own
// look inside, which waits for nothing.
func (te *testEngine) raw(t *testing.T, id string) func(cmd string) string {
	return func(cmd string) string {
		t.Helper()
		var out bytes.Buffer
		if _, err := te.docker.Exec(context.Background(), id, runtime.ExecOptions{Cmd: []string{"sh", "-c", cmd}, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
}

// holdInstall starts an install (apt, of jq) in sandbox id, whose apt-get
// is heldApt, and returns once its window is open and held; the install's
// error arrives on the channel after raw("touch /tmp/release").
func (te *testEngine) holdInstall(t *testing.T, id string, raw func(string) string) <-chan error {
	t.Helper()
	opened := make(chan struct{})
	installed := make(chan error, 1)
	go func() {
		_, err := te.InstallPackages(context.Background(), te.owner, id, sandbox.InstallRequest{Packages: []string{"jq"}, Manager: "apt"}, func(_, _ float64, msg string) {
			if strings.Contains(msg, "through Sandtray's egress gate for the install") {
				close(opened)
			}
		})
		installed <- err
	}()
	select {
	case <-opened:
	case err := <-installed:
		t.Fatalf("the install ended before its window opened: %v", err)
	}
	eventually(t, 30*time.Second, "the held apt-get to start", func() bool { return raw("ls /tmp/window 2>/dev/null") != "" })
	return installed
}

// TestPortForwardsWaitForTheInstallWindow: while an install has an offline
// sandbox's way out through the egress gate open (its other processes
// frozen), expose_port and new connections through an existing forward
// wait at the sandbox's gate, and are served once it is offline again. No
// process starts in the sandbox for them at any time: the agent carries
// the connections.
func TestPortForwardsWaitForTheInstallWindow(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "/usr/local/sbin/apt-get", Data: []byte(heldApt), Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	raw := te.raw(t, id)
	if _, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "python3 -m http.server 8000 --bind 127.0.0.1", Background: true}); err != nil {
		t.Fatal(err)
	}
	fw, err := te.ExposePort(ctx, te.owner, id, 8000, 0)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the server to answer through the forward", func() bool {
		reply, err := get(fw.HostPort, 30*time.Second)
		return err == nil && strings.HasPrefix(reply, "HTTP/1.0 200")
	})
	procs := raw("ls /proc | grep -c '^[0-9]'")

	installed := te.holdInstall(t, id, raw)
	exposed := make(chan error, 1)
	go func() {
		_, err := te.ExposePort(ctx, te.owner, id, 8001, 0)
		exposed <- err
	}()
	replies := make(chan string, 2)
	for range 2 {
		go func() {
			reply, err := get(fw.HostPort, 2*time.Minute)
			replies <- fmt.Sprint(reply, err)
		}()
	}
	eventually(t, 30*time.Second, "expose_port and the two new connections to wait for the install", func() bool {
		return te.execs.WaitingIn(id) >= 3
	})
	raw("touch /tmp/release")
	if err := <-installed; err != nil {
		t.Fatalf("install: %v", err)
	}
	if err := <-exposed; err != nil {
		t.Errorf("expose_port during the install: %v", err)
	}
	for range 2 {
		if r := <-replies; !strings.HasPrefix(r, "HTTP/1.0 200") {
			t.Errorf("a connection made during the install: %.200q", r)
		}
	}
	if got := raw("ls /proc | grep -c '^[0-9]'"); got != procs {
		t.Errorf("the sandbox had %s processes before the install and %s after the forwards were used: the forwards started processes", strings.TrimSpace(procs), strings.TrimSpace(got))
	}
}

// get sends an HTTP/1.0 GET to 127.0.0.1:port and returns the reply.
func get(port int, within time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), within)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(within))
	if _, err := io.WriteString(c, "GET / HTTP/1.0\r\n\r\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}
