//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// reaper starts processes and collects every child's end with wait4(-1):
// as PID 1 the agent is the parent of every orphan, which it must reap, and
// one collector for all children means none of its own is reaped by
// another. A process is registered under the lock it is started under,
// which the collector takes to deliver an end, so no end goes unclaimed.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]chan syscall.WaitStatus // guarded by mu: pid → its end
}

var (
	theReaper     *reaper
	theReaperOnce sync.Once
)

// reap returns the process's one reaper, started on first use.
func reap() *reaper {
	theReaperOnce.Do(func() {
		theReaper = &reaper{waiting: map[int]chan syscall.WaitStatus{}}
		sig := make(chan os.Signal, 16)
		signal.Notify(sig, syscall.SIGCHLD)
		go func() {
			for range sig {
				theReaper.collect()
			}
		}()
	})
	return theReaper
}

// collect reaps every child that has ended.
func (r *reaper) collect() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		r.mu.Lock()
		ch := r.waiting[pid]
		delete(r.waiting, pid)
		r.mu.Unlock()
		if ch != nil {
			ch <- ws
		}
	}
}

// proc is how to start one process.
type proc struct {
	argv  []string
	env   []string
	dir   string
	files [3]*os.File // stdin, stdout, stderr
}

// errNoProgram is a spawn whose program does not exist.
var errNoProgram = errors.New("no such program")

// start starts p in a session and process group of its own (its pid is
// the group's id) and returns its pid, when it started (clock ticks after
// boot: read before the collector may reap it) and its end.
func (r *reaper) start(p proc) (int, uint64, <-chan syscall.WaitStatus, error) {
	path, err := lookPath(p.argv[0], p.env)
	if err != nil {
		return 0, 0, nil, err
	}
	attr := &syscall.ProcAttr{Dir: p.dir, Env: p.env,
		Files: []uintptr{p.files[0].Fd(), p.files[1].Fd(), p.files[2].Fd()},
		Sys:   &syscall.SysProcAttr{Setsid: true}}
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := syscall.ForkExec(path, p.argv, attr)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) && p.dir != "" {
			if _, serr := os.Stat(p.dir); serr != nil {
				return 0, 0, nil, fmt.Errorf("the working folder %s does not exist: %w", p.dir, fs.ErrNotExist)
			}
		}
		if errors.Is(err, syscall.ENOENT) {
			return 0, 0, nil, fmt.Errorf("%s: %w", path, errNoProgram)
		}
		return 0, 0, nil, fmt.Errorf("start %s: %w", path, err)
	}
	ch := make(chan syscall.WaitStatus, 1)
	r.waiting[pid] = ch
	return pid, started(pid), ch, nil
}

// lookPath finds name as execvp would, in env's PATH (or agentEnvPath).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := agentEnvPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, errNoProgram)
}

// mergeEnv is base with over's variables after it; a later one replaces an
// earlier one of the same name, in place.
func mergeEnv(base, over []string) []string {
	out := make([]string, 0, len(base)+len(over))
	at := map[string]int{}
	for _, list := range [][]string{base, over} {
		for _, kv := range list {
			k, _, _ := strings.Cut(kv, "=")
			if i, ok := at[k]; ok {
				out[i] = kv
				continue
			}
			at[k] = len(out)
			out = append(out, kv)
		}
	}
	return out
}
