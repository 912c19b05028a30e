//go:build unix

package shim

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// request is what the tests' MCP client sends; none of it may reach a
// server the shim should not trust.
const request = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"secret"}}}` + "\n"

// TestRefusesSocketInOpenFolder: a socket whose folder others can write
// (someone could have put their own socket there) gets not one byte.
func TestRefusesSocketInOpenFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.sock")
	ln, err := net.Listen("unix", path) // not socket.Listen, which would refuse the folder
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, _ := io.ReadAll(c)
		got <- b
	}()
	t.Cleanup(func() { ln.Close() })

	var stderr lockedBuffer
	err = runShim(t, Options{Stdin: strings.NewReader(request), Stdout: io.Discard, Stderr: &stderr, SocketPath: path,
		StartEngine: func(context.Context) (<-chan struct{}, error) { t.Error("started an engine"); return nil, nil }})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Run = %v; want a refusal naming the folder %s", err, dir)
	}
	ln.Close()
	if b := <-got; len(b) > 0 {
		t.Errorf("the server in an open folder received %q", b)
	}
}

// TestRefusesServerOfAnotherUser: a socket served by a process of another
// uid gets not one byte, though its folder is ours.
func TestRefusesServerOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a server as another user")
	}
	python, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("needs /usr/bin/python3 for the other user's server")
	}
	path := socketPath(t)
	// Bind as root in our private folder, then let a process of uid 65534
	// call listen: the kernel records the listener's credentials then.
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "listener")
	server := exec.Command(python, "-c", `
import socket, sys
s = socket.socket(fileno=3)
s.listen()
print("listening", flush=True)
c, _ = s.accept()
c.settimeout(2)
n = 0
try:
    while True:
        b = c.recv(4096)
        if not b: break
        n += len(b)
except Exception:
    pass
print(n)
`)
	server.ExtraFiles = []*os.File{f}
	server.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "listening" {
		t.Fatalf("the other user's server did not start: %q", lines.Text())
	}

	err = runShim(t, Options{Stdin: strings.NewReader(request), Stdout: io.Discard, SocketPath: path,
		StartEngine: func(context.Context) (<-chan struct{}, error) { t.Error("started an engine"); return nil, nil }})
	if err == nil || !strings.Contains(err.Error(), "65534") {
		t.Errorf("Run = %v; want a refusal naming the server's uid 65534", err)
	}
	if !lines.Scan() || lines.Text() != "0" {
		t.Errorf("the other user's server received %q bytes, want 0", lines.Text())
	}
}
