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

// notingPython is the model's python3, first on the sandbox's PATH: it
// notes each start with the start of its arguments (the program), and
// whether the install's way out was open then.
const notingPython = `#!/bin/sh
what=$(printf '%.60s' "$*" | head -n 1)
if [ -e /tmp/window ]; then echo "start: during the install: $what" >> /tmp/py-starts; else echo "start: $what" >> /tmp/py-starts; fi
exec /usr/bin/python3 "$@"
`

// startedDuringInstall returns the starts noted during the install but
// for the install's own: the relays of its channel to the egress gate
// (their programs import array, to receive a connection's socket), which it
// starts ahead of need while its window is open.
func startedDuringInstall(starts string) []string {
	var out []string
	for line := range strings.Lines(starts) {
		if strings.Contains(line, "during the install") && !strings.Contains(line, "sys,array,") && !strings.Contains(line, "select,array") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

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
// sandbox's way out through the egress gate open, expose_port, a new connection through an existing
// forward (which takes the forward's spare relay, frozen with the rest, and
// starts another) and a second one (which starts its own relay) start no
// process in the sandbox: each waits until the sandbox is offline again,
// and is served then.
func TestPortForwardsWaitForTheInstallWindow(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	for path, data := range map[string]string{"/usr/local/bin/python3": notingPython, "/usr/local/sbin/apt-get": heldApt} {
		if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: path, Data: []byte(data), Mode: 0o755}); err != nil {
			t.Fatal(err)
		}
	}
	raw := te.raw(t, id)
	starts := func() string { return raw("cat /tmp/py-starts 2>/dev/null") }
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
	// The server, the first spare, and the one that replaced it.
	eventually(t, 10*time.Second, "the forward's spare relay", func() bool { return strings.Count(starts(), "start:") >= 3 })

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
	eventually(t, 30*time.Second, "expose_port, the spare's replacement and the new connection's relay to wait for the install", func() bool {
		if s := starts(); len(startedDuringInstall(s)) > 0 {
			t.Fatalf("python3 started while the install had its way out open (%d of the three waited):\n%s", te.execs.WaitingIn(id), s)
		}
		return te.execs.WaitingIn(id) >= 3
	})
	if s := starts(); len(startedDuringInstall(s)) > 0 {
		t.Errorf("python3 started while the install had its way out open:\n%s", s)
	}
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
	if s := starts(); len(startedDuringInstall(s)) > 0 {
		t.Errorf("python3 started while the install had its way out open:\n%s", s)
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
