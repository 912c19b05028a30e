package main

import (
	"net"
	"path/filepath"
	"testing"
)

// TestDisplayAnswers: a display named in the environment counts only when
// it accepts a connection, so a stale DISPLAY falls back to serve.
func TestDisplayAnswers(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "wayland-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, c := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing named", map[string]string{}, false},
		{"live wayland socket", map[string]string{"WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": dir}, true},
		{"live wayland socket by path", map[string]string{"WAYLAND_DISPLAY": filepath.Join(dir, "wayland-1")}, true},
		{"stale wayland", map[string]string{"WAYLAND_DISPLAY": "wayland-9", "XDG_RUNTIME_DIR": dir}, false},
		{"stale X display", map[string]string{"DISPLAY": ":65000"}, false},
		{"unreachable remote X", map[string]string{"DISPLAY": "127.0.0.1:59000.0"}, false},
		{"not a display", map[string]string{"DISPLAY": "garbage"}, false},
	} {
		if got := displayAnswers(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%s: displayAnswers = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestXSocket(t *testing.T) {
	for d, want := range map[string]string{
		":0":             "unix /tmp/.X11-unix/X0",
		":99.0":          "unix /tmp/.X11-unix/X99",
		"unix:1":         "unix /tmp/.X11-unix/X1",
		"localhost:10.0": "tcp localhost:6010",
		"x":              "",
	} {
		network, addr, ok := xSocket(d)
		got := ""
		if ok {
			got = network + " " + addr
		}
		if got != want {
			t.Errorf("xSocket(%q) = %q, want %q", d, got, want)
		}
	}
}
