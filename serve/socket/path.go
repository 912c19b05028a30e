// Package socket owns the engine's private endpoint: where it lives, how it
// is created and who may connect. On Linux and macOS it is a unix socket
// (0700 directory, 0600 socket, stale-socket detection, one engine per
// socket, only peers of the engine's own uid); on Windows a named pipe,
// \\.\pipe\sandtray-<user>, whose security descriptor admits only the
// user (see listen_windows.go).
//
// The engine calls Listen; the sandtray-mcp shim calls Dial. Both find the
// endpoint with Path, so they agree as long as they share an environment.
package socket

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// EnvSocket names the environment variable that overrides the socket path.
// Tests use it, and the shim sets it for an engine it starts so both sides
// agree on the path even when it was given explicitly.
const EnvSocket = "SANDTRAY_SOCKET"

// socketName is the file name of the socket inside its directory.
const socketName = "mcp.sock"

// maxPathLen is the longest socket path every supported OS accepts in
// sockaddr_un.sun_path (104 on macOS and the BSDs, 108 on Linux), minus the
// terminating NUL.
const maxPathLen = 103

// Path returns the absolute path of the engine's socket.
//
// It is $SANDTRAY_SOCKET when set, else $XDG_RUNTIME_DIR/sandtray/mcp.sock.
// When the runtime dir is missing, not owned by the user, or writable by group
// or others (adrg/xdg falls back to paths that may be any of these), it uses a
// per-user directory instead: sandtray/run in the user's cache dir, or
// /tmp/sandtray-<uid> when that path would be too long for a socket. Path
// creates nothing; Listen creates and verifies the directory.
func Path() (string, error) {
	if p := os.Getenv(EnvSocket); p != "" {
		if isPipePath(p) {
			return p, nil
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("socket path from %s: %w", EnvSocket, err)
		}
		return abs, nil
	}
	return defaultPath()
}

// resolve picks the socket path given the runtime dir, a source for the
// user's cache dir and the user's uid. It is Path without the environment.
func resolve(runtimeDir string, cacheDir func() (string, error), uid int) (string, error) {
	if err := checkPrivateParent(runtimeDir, uid); err == nil {
		if p := filepath.Join(runtimeDir, "sandtray", socketName); len(p) <= maxPathLen {
			return p, nil
		}
	}
	if dir, err := cacheDir(); err == nil && filepath.IsAbs(dir) {
		if p := filepath.Join(dir, "sandtray", "run", socketName); len(p) <= maxPathLen {
			return p, nil
		}
	}
	// Last resort for very long home paths. The directory sits in the shared
	// /tmp, so Listen insists it is a real directory owned by us with mode
	// 0700; someone squatting the name makes Listen fail, never connect us to
	// their socket.
	p := filepath.Join("/tmp", "sandtray-"+strconv.Itoa(uid), socketName)
	return p, nil
}

// checkPrivateParent reports whether dir is an absolute, existing directory
// owned by uid that neither group nor others can write: a place where nobody
// else can create or replace our socket directory.
func checkPrivateParent(dir string, uid int) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return errors.New("not an absolute path")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	owner, ok := ownerOf(fi)
	if !ok || owner != uid {
		return fmt.Errorf("%s is not owned by uid %d", dir, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %v)", dir, fi.Mode().Perm())
	}
	return nil
}

// ErrInsecureDir is returned (wrapped) by Listen when the socket's directory
// is not a real directory owned by the engine's uid with mode 0700.
var ErrInsecureDir = errors.New("socket directory is not private")

// dirMode is the only mode Listen accepts for the socket's directory: nobody
// but the owner may look up, create or replace anything in it.
const dirMode fs.FileMode = 0o700

// ensurePrivateDir creates dir with mode 0700 if it is missing, then verifies
// it. An existing directory is never loosened or tightened behind the user's
// back: a wrong owner or mode is an error that says what to fix.
func ensurePrivateDir(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := createPrivateDir(dir); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	return verifyPrivateDir(dir, os.Getuid())
}

// createPrivateDir makes dir and any missing parents. Mkdir's mode is filtered
// by the umask, so the final directory is chmod'ed to exactly 0700; a umask
// can only remove bits, so there is no moment where it is looser.
func createPrivateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), dirMode); err != nil {
		return fmt.Errorf("create socket directory: %w", err)
	}
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create socket directory: %w", err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		return fmt.Errorf("create socket directory: %w", err)
	}
	return nil
}

// verifyPrivateDir checks that dir itself (not a symlink) is a directory owned
// by uid with no permission bits for group or others.
func verifyPrivateDir(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory (%v); remove it and start again",
			ErrInsecureDir, dir, fi.Mode().Type())
	}
	if owner, ok := ownerOf(fi); !ok || owner != uid {
		return fmt.Errorf("%w: %s is owned by uid %d, not %d; remove it and start again",
			ErrInsecureDir, dir, owner, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %#o, want 0700; run chmod 700 %s",
			ErrInsecureDir, dir, perm, dir)
	}
	return nil
}
