package socket

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adrg/xdg"
)

// privateDir returns a fresh directory with the given mode.
func privateDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestResolve(t *testing.T) {
	uid := os.Getuid()
	cache := t.TempDir()
	cacheOK := func() (string, error) { return cache, nil }
	cacheErr := func() (string, error) { return "", errors.New("no home") }
	long := "/" + strings.Repeat("x", 120)
	cacheLong := func() (string, error) { return long, nil }
	secure := privateDir(t, 0o700)
	tmpFallback := filepath.Join("/tmp", "sandtray-"+strconv.Itoa(uid), "mcp.sock")
	cacheSock := filepath.Join(cache, "sandtray", "run", "mcp.sock")

	tests := []struct {
		name    string
		runtime string
		cache   func() (string, error)
		want    string
	}{
		{"secure runtime dir", secure, cacheOK, filepath.Join(secure, "sandtray", "mcp.sock")},
		{"runtime dir unset", "", cacheOK, cacheSock},
		{"runtime dir missing", filepath.Join(secure, "nope"), cacheOK, cacheSock},
		{"runtime dir relative", "run/user", cacheOK, cacheSock},
		{"runtime dir world-writable", privateDir(t, 0o777), cacheOK, cacheSock},
		{"runtime dir sticky world-writable like /tmp", privateDir(t, 0o1777), cacheOK, cacheSock},
		{"runtime dir group-writable", privateDir(t, 0o770), cacheOK, cacheSock},
		{"runtime path too long for a socket", long, cacheOK, cacheSock},
		{"no cache dir either", "", cacheErr, tmpFallback},
		{"cache path too long", "", cacheLong, tmpFallback},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolve(tt.runtime, tt.cache, uid)
			if err != nil {
				t.Fatalf("resolve: %v", err)
			}
			if got != tt.want {
				t.Errorf("resolve(%q) = %q, want %q", tt.runtime, got, tt.want)
			}
		})
	}
}

func TestResolveRejectsRuntimeDirOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown a directory to another uid")
	}
	dir := privateDir(t, 0o700)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	got, err := resolve(dir, func() (string, error) { return cache, nil }, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "sandtray", "run", "mcp.sock"); got != want {
		t.Errorf("runtime dir owned by uid 65534: got %q, want the cache fallback %q", got, want)
	}
}

func TestPathEnvOverride(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(EnvSocket, "rel/engine.sock")
	got, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "rel", "engine.sock"); got != want {
		t.Errorf("Path() = %q, want the absolute %q (clients start the shim with cwd /)", got, want)
	}
}

// TestPathFromXDG drives Path through adrg/xdg, which reads the environment
// only when (re)loaded.
func TestPathFromXDG(t *testing.T) {
	t.Cleanup(xdg.Reload) // runs after t.Setenv restores the environment
	cache := t.TempDir()
	t.Setenv(EnvSocket, "")
	t.Setenv("XDG_CACHE_HOME", cache)

	secure := privateDir(t, 0o700)
	t.Setenv("XDG_RUNTIME_DIR", secure)
	xdg.Reload()
	if got, _ := Path(); got != filepath.Join(secure, "sandtray", "mcp.sock") {
		t.Errorf("secure XDG_RUNTIME_DIR: Path() = %q", got)
	}

	t.Setenv("XDG_RUNTIME_DIR", privateDir(t, 0o777))
	xdg.Reload()
	if got, _ := Path(); got != filepath.Join(cache, "sandtray", "run", "mcp.sock") {
		t.Errorf("world-writable XDG_RUNTIME_DIR: Path() = %q, want the cache fallback", got)
	}
}
