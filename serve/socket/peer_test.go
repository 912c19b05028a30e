//go:build unix

package socket

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a socket client (see TestMain): it
// dials the socket named by the variable and prints what happened.
const helperEnv = "SANDTRAY_SOCKET_TEST_DIAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		fmt.Print(dialAndRead(path))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// dialAndRead is the helper client: "dial error: ..." when connect fails,
// "eof" when the server closes without sending, else what it read.
func dialAndRead(path string) string {
	c, err := net.Dial("unix", path)
	if err != nil {
		return "dial error: " + err.Error()
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		return "read error: " + err.Error()
	}
	if len(b) == 0 {
		return "eof"
	}
	return "read " + string(b)
}

func TestPeerUIDOnSocketpair(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[0]), "pair")
	defer f.Close()
	defer syscall.Close(fds[1])
	fc, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	uid, err := peerUID(fc.(*net.UnixConn))
	if err != nil || uid != os.Getuid() {
		t.Errorf("peerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}

// TestOtherUIDRefused runs a client as uid 65534 (nobody) against the real
// listener. First with the modes Listen sets, where the 0700 directory keeps
// it from even connecting; then with the directory and socket opened up by
// the test, as if file modes were not enforced, where Accept's peer check
// must refuse and log it.
func TestOtherUIDRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another uid")
	}
	base, err := os.MkdirTemp("", "sandtray-xuid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	helper := copySelf(t, filepath.Join(base, "helper"))
	dir := filepath.Join(base, "run")
	path := filepath.Join(dir, "mcp.sock")
	var logs syncBuffer
	ln := listenT(t, path, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	accepted := acceptAll(t, ln)

	if out := runAsNobody(t, helper, path); !strings.Contains(out, "permission denied") {
		t.Errorf("nobody dialing through the 0700 dir: %q, want permission denied", out)
	}

	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if out := runAsNobody(t, helper, path); out != "eof" {
		t.Errorf("nobody past the file modes: %q, want eof (connection closed unserved)", out)
	}
	if !strings.Contains(logs.String(), "peer_uid=65534") {
		t.Errorf("refusal not logged; log = %q", logs.String())
	}
	select {
	case <-accepted:
		t.Fatal("Accept handed out the other uid's connection")
	default:
	}
	roundTripAccepted(t, path, accepted) // still serving its own user
}

// acceptAll accepts on ln until it is closed, sending each connection on the
// returned channel. The goroutine ends when the test's cleanup closes ln.
func acceptAll(t *testing.T, ln *Listener) <-chan net.Conn {
	ch := make(chan net.Conn, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			ch <- c
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ch
}

// roundTripAccepted dials path as ourselves and expects Accept to deliver it.
func roundTripAccepted(t *testing.T, path string, accepted <-chan net.Conn) {
	t.Helper()
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatalf("Dial as our own uid: %v", err)
	}
	defer c.Close()
	select {
	case s := <-accepted:
		s.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("Accept did not deliver our own connection")
	}
}

// runAsNobody runs the helper binary as uid/gid 65534 and returns its output.
func runAsNobody(t *testing.T, helper, path string) string {
	t.Helper()
	cmd := exec.Command(helper)
	cmd.Dir = filepath.Dir(helper)
	cmd.Env = []string{helperEnv + "=" + path}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper as nobody: %v: %s", err, out)
	}
	return string(out)
}

// copySelf copies the test binary to dst (mode 0755) so another uid can run
// it; the go build cache is private to us.
func copySelf(t *testing.T, dst string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
