package main

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// hasDisplay reports whether a window can be shown: on Linux, a Wayland or
// X display named in the environment must also answer, since a stale
// DISPLAY (an SSH session, a stopped Xvfb) would make the GUI toolkit panic
// at start instead of Sandtray serving without its window.
func hasDisplay() bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return true
	}
	return displayAnswers(os.Getenv)
}

// displayAnswers reports whether the Wayland or X display that getenv
// names accepts a connection.
func displayAnswers(getenv func(string) string) bool {
	if w := getenv("WAYLAND_DISPLAY"); w != "" {
		if !filepath.IsAbs(w) {
			w = filepath.Join(getenv("XDG_RUNTIME_DIR"), w)
		}
		if dials("unix", w) {
			return true
		}
	}
	network, addr, ok := xSocket(getenv("DISPLAY"))
	return ok && dials(network, addr)
}

// xSocket is where the X display d ("[host]:N[.screen]") listens: a unix
// socket for a local display, TCP port 6000+N for a remote one.
func xSocket(d string) (network, addr string, ok bool) {
	host, rest, found := strings.Cut(d, ":")
	if !found {
		return "", "", false
	}
	num, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return "", "", false
	}
	if host == "" || host == "unix" {
		return "unix", "/tmp/.X11-unix/X" + num, true
	}
	return "tcp", net.JoinHostPort(host, strconv.Itoa(6000+n)), true
}

func dials(network, addr string) bool {
	c, err := net.DialTimeout(network, addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
