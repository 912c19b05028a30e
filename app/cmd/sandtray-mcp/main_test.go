package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/serve/socket"
)

// runMainEnv makes the test binary run main() instead of the tests, so the
// tests drive the real command's stdio and exit code.
const runMainEnv = "SANDTRAY_MCP_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command runs this binary as sandtray-mcp with args, stdin and the socket
// path in the environment, and an empty PATH so no real engine is started.
func command(t *testing.T, sock, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = []string{runMainEnv + "=1", socket.EnvSocket + "=" + sock, "PATH=", "HOME=" + t.TempDir()}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// privateSocketPath is a socket path in a fresh 0700 directory.
func privateSocketPath(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "mcp.sock")
}

func TestVersion(t *testing.T) {
	stdout, _, code := command(t, privateSocketPath(t), "", "--version")
	if code != 0 || !strings.HasPrefix(stdout, "sandtray-mcp ") {
		t.Errorf("--version: exit %d, stdout %q", code, stdout)
	}
}

func TestPipesThroughTheEngine(t *testing.T) {
	sock := privateSocketPath(t)
	ln, err := socket.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()

	stdout, stderr, code := command(t, sock, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	<-done
	if code != 0 || stdout != `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and the echoed request only", code, stdout, stderr)
	}
}

func TestNoEngineFailsWithAdvice(t *testing.T) {
	stdout, stderr, code := command(t, privateSocketPath(t), "{}\n")
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing: it is the client's protocol stream", stdout)
	}
	if !strings.Contains(stderr, "sandtray serve") {
		t.Errorf("stderr = %q, want advice to run `sandtray serve`", stderr)
	}
}
