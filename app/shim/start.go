package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sandtray/sandtray/serve/socket"
)

// engineName is the engine binary's file name (exeSuffix is ".exe" on
// Windows).
const engineName = "sandtray" + exeSuffix

// detachedStarter returns the built-in StartEngine: it launches the engine in
// its own session so it outlives this shim and the client that started it,
// and returns without waiting for it.
func detachedStarter(opts Options) func(ctx context.Context) (<-chan struct{}, error) {
	return func(ctx context.Context) (<-chan struct{}, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		self, _ := os.Executable()
		exe, err := findEngine(opts.EnginePath, self, exec.LookPath)
		if err != nil {
			return nil, err
		}
		return startDetached(exe, engineArgs, opts)
	}
}

// startDetached starts exe with args in a new session, stdin from /dev/null
// and stdout/stderr appended to opts.LogPath, and returns a channel closed
// if it exits while the shim runs. The shim's own stdout must never reach
// the engine: it is the client's protocol stream.
func startDetached(exe string, args []string, opts Options) (<-chan struct{}, error) {
	logFile, err := openLog(opts.LogPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own copy
	fmt.Fprintf(logFile, "%s%s sandtray-mcp starts %s %q\n", startMarker, time.Now().Format(time.RFC3339), exe, args)

	// Not exec.CommandContext: the engine must outlive ctx and this process.
	cmd := exec.Command(exe, args...)
	cmd.Dir = detachedDir(exe)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), socket.EnvSocket+"="+opts.SocketPath)
	// Not in the shim's process group or session, which clients signal when
	// they stop the server (see detach_unix.go, detach_windows.go).
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	// The engine normally outlives the shim, which then stops waiting for
	// it; one that exits first (it could not start) is reaped here.
	ended := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(ended)
	}()
	return ended, nil
}

// startMarker begins the line startDetached writes to the log before each
// engine it starts.
const startMarker = "--- "

// endedWith is the error the engine last started into the log at path
// printed as it exited (`sandtray: …`), or "" when it printed none (it may
// still be starting). Only the log's last 64 KiB are read.
func endedWith(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > tail {
		f.Seek(st.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(string(b), "\n")
	why := ""
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, startMarker):
			why = "" // an earlier start's
		case strings.HasPrefix(l, "sandtray: "):
			why = strings.TrimSpace(l)
		}
	}
	return why
}

// openLog opens the engine log for appending, creating it and its directory
// private to the user.
func openLog(path string) (*os.File, error) {
	if path == "" {
		return nil, errors.New("no place for the engine log: set HOME or XDG_STATE_HOME")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("engine log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("engine log: %w", err)
	}
	return f, nil
}

// findEngine returns the engine binary: explicit when set; else `sandtray`
// next to the shim (self), also through a symlinked shim, so an unpacked
// release works without PATH; else the one lookPath finds.
func findEngine(explicit, self string, lookPath func(string) (string, error)) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if self != "" {
		dirs := []string{filepath.Dir(self)}
		if real, err := filepath.EvalSymlinks(self); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
		for _, dir := range dirs {
			if p := filepath.Join(dir, engineName); isExecutable(p) {
				return p, nil
			}
		}
	}
	p, err := lookPath(engineName)
	if err != nil {
		return "", fmt.Errorf("no %q next to %s or in PATH", engineName, self)
	}
	return p, nil
}

// isExecutable reports whether path is a regular file with an execute bit
// (Windows has none: there, a regular file named .exe).
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0)
}

// engineArgs are the engine's arguments: `serve`, the engine without a
// window, on every system. The shim never opens a window: an assistant
// that starts Sandtray gets the engine alone, and the person opens the
// app when they want it (it becomes that engine's window).
var engineArgs = []string{"serve"}

// defaultLogPath is sandtray/engine.log in the XDG state dir, following
// adrg/xdg's rules, which the engine uses for its state (this package may not
// import it). It is empty when no home directory is known.
func defaultLogPath() string {
	dir := stateDir(runtime.GOOS, os.Getenv, os.UserHomeDir)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "sandtray", "engine.log")
}

// stateDir is $XDG_STATE_HOME when absolute, else the OS default under home.
func stateDir(goos string, getenv func(string) string, home func() (string, error)) string {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d
	}
	h, err := home()
	if err != nil || h == "" {
		return ""
	}
	switch goos {
	case "darwin":
		return filepath.Join(h, "Library", "Application Support")
	case "windows": // adrg/xdg's state dir there is the local app data folder
		if d := getenv("LOCALAPPDATA"); filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(h, "AppData", "Local")
	}
	return filepath.Join(h, ".local", "state")
}
