//go:build unix

package socket

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// listenT runs Listen and closes the listener when the test ends.
func listenT(t *testing.T, path string, opts ...Option) *Listener {
	t.Helper()
	ln, err := Listen(path, opts...)
	if err != nil {
		t.Fatalf("Listen(%s): %v", path, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// perm returns the permission bits of path, failing the test if it is missing.
func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// roundTrip dials path, accepts on ln and checks bytes get through.
func roundTrip(t *testing.T, ln *Listener, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	defer s.Close()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("server read %q, %v; want ping", buf, err)
	}
}

func TestListenModesDespitePermissiveUmask(t *testing.T) {
	old := syscall.Umask(0) // a umask of 0 would leave a bare bind at 0777
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "state", "sandtray")
	path := filepath.Join(dir, "mcp.sock")

	ln := listenT(t, path)

	if got := perm(t, dir); got != 0o700 {
		t.Errorf("socket dir mode = %#o, want 0700", got)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", fi.Mode())
	}
	roundTrip(t, ln, path)
}

func TestListenRefusesLooseOrForeignDir(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string){
		"mode 0755": func(t *testing.T, dir string) { os.Chmod(dir, 0o755) },
		"mode 0770": func(t *testing.T, dir string) { os.Chmod(dir, 0o770) },
		"mode 0701": func(t *testing.T, dir string) { os.Chmod(dir, 0o701) },
		"symlink to a private dir": func(t *testing.T, dir string) {
			target := privateDir(t, 0o700)
			os.Remove(dir)
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		},
		"owned by another uid": func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to chown")
			}
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sandtray")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			spoil(t, dir)
			path := filepath.Join(dir, "mcp.sock")
			ln, err := Listen(path)
			if err == nil {
				ln.Close()
				t.Fatal("Listen succeeded in an insecure directory")
			}
			if !errors.Is(err, ErrInsecureDir) {
				t.Errorf("err = %v, want ErrInsecureDir", err)
			}
			if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("socket was created anyway (lstat: %v)", err)
			}
		})
	}
}

func TestListenRemovesStaleSocket(t *testing.T) {
	path := filepath.Join(privateDir(t, 0o700), "mcp.sock")
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	dead.SetUnlinkOnClose(false) // what a crashed engine leaves behind
	dead.Close()

	ln := listenT(t, path)
	roundTrip(t, ln, path)
}

func TestListenRefusesLiveSocket(t *testing.T) {
	path := filepath.Join(privateDir(t, 0o700), "mcp.sock")
	live, err := net.Listen("unix", path) // an engine without our lock
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	ln, err := Listen(path)
	if err == nil {
		ln.Close()
		t.Fatal("Listen took over a socket somebody answers on")
	}
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("err = %v, want ErrAlreadyRunning", err)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the live socket no longer answers: %v", err)
	}
	c.Close()
}

func TestListenSecondEngineRefused(t *testing.T) {
	path := filepath.Join(privateDir(t, 0o700), "mcp.sock")
	first := listenT(t, path)

	second, err := Listen(path)
	if err == nil {
		second.Close()
		t.Fatal("a second Listen on the same path succeeded")
	}
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("err = %v, want ErrAlreadyRunning", err)
	}
	roundTrip(t, first, path)
}

func TestListenLeavesNonSocketAlone(t *testing.T) {
	path := filepath.Join(privateDir(t, 0o700), "mcp.sock")
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ln, err := Listen(path); err == nil {
		ln.Close()
		t.Fatal("Listen replaced a regular file")
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Errorf("file content now %q", b)
	}
}

func TestCloseRemovesSocketAndFreesPath(t *testing.T) {
	path := filepath.Join(privateDir(t, 0o700), "mcp.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ln.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file still there after Close (lstat: %v)", err)
	}
	if err := ln.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
	again := listenT(t, path) // the lock was released
	roundTrip(t, again, path)
}

func TestListenRejectsUnusablePaths(t *testing.T) {
	long := filepath.Join(privateDir(t, 0o700), strings.Repeat("x", 110)+".sock")
	for _, path := range []string{"mcp.sock", long} {
		if ln, err := Listen(path); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) succeeded", path)
		}
	}
}

func TestWithLoggerNilKeepsDefault(t *testing.T) {
	var buf bytes.Buffer
	l := &Listener{log: slog.New(slog.NewTextHandler(&buf, nil))}
	WithLogger(nil)(l)
	l.logRefusal(42, nil)
	if !bytes.Contains(buf.Bytes(), []byte("peer_uid=42")) {
		t.Errorf("log = %q", buf.String())
	}
}
