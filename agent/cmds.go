//go:build linux

package agent

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// runWrapped runs argv ("run [--marker K] -- ARGV...") with the agent's
// stdin, stdout and stderr, in a process group of its own; when it ends,
// its group and what carries the marker are killed, and the agent exits
// with its status. The engine's execs that cannot go through the session
// (another user than the agent's, an install) run under it: never under
// a shell of the sandbox's.
func runWrapped(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	marker, dir := "", ""
	for len(args) > 0 && args[0] != "--" {
		if v, ok := strings.CutPrefix(args[0], "--marker="); ok {
			marker = v
		} else if v, ok := strings.CutPrefix(args[0], "--dir="); ok {
			dir = v
		} else {
			return fail(stderr, "run: unknown flag %q", args[0])
		}
		args = args[1:]
	}
	if len(args) < 2 {
		return fail(stderr, "run: no program after --")
	}
	argv := args[1:]
	env := os.Environ()
	if marker != "" {
		env = mergeEnv(env, []string{"SANDTRAY_EXEC=" + marker})
	}
	dir, notice := workdir(dir)
	fmt.Fprint(stderr, notice)
	pid, since, done, err := reap().start(proc{argv: argv, env: env, dir: dir, files: [3]*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		fmt.Fprintf(stderr, "sandtray: %v\n", err)
		return 127
	}
	code, _ := exitCode(<-done)
	sweep([]int{pid}, marker, since)
	return code
}

// killCmd ("kill [--marker=K] [PGID...]") kills the groups and what
// carries the marker (see sweep) and prints "killed N".
func killCmd(args []string, stdout, stderr io.Writer) int {
	marker, groups := "", []int{}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--marker="); ok {
			marker = v
			continue
		}
		g, err := strconv.Atoi(a)
		if err != nil || g < 2 {
			return fail(stderr, "kill: %q is not a process group", a)
		}
		groups = append(groups, g)
	}
	fmt.Fprintf(stdout, "killed %d\n", sweep(groups, marker, 0))
	return 0
}

// cmdline is a process's command line, bounded.
func cmdline(pid int) []byte {
	b, _ := readBounded("/proc/"+strconv.Itoa(pid)+"/cmdline", 4<<10)
	return b
}

// engineAgent reports whether a process the runtime started (its parent is
// 0 in the sandbox: no process inside can make itself one) is an agent
// serving the engine's session, which an install's freeze spares.
func engineAgent(st procStat) bool {
	if st.ppid != 0 {
		return false
	}
	f := bytes.Split(cmdline(st.pid), []byte{0})
	return len(f) >= 2 && bytes.HasSuffix(f[0], []byte("sandtray-agent")) && string(f[1]) == "serve"
}

// running reports whether a process, or one of its threads, runs: its
// state is neither stopped (T, t) nor dead (Z, X).
func running(st procStat) bool {
	if !stoppedOrDead(st.state) {
		return true
	}
	d, err := os.Open("/proc/" + strconv.Itoa(st.pid) + "/task")
	if err != nil {
		return false
	}
	defer d.Close()
	tids, _ := d.Readdirnames(-1)
	for _, t := range tids {
		b, ok := readBounded("/proc/"+strconv.Itoa(st.pid)+"/task/"+t+"/stat", 4<<10)
		if i := bytes.LastIndex(b, []byte(") ")); ok && i >= 0 && len(b) > i+2 && !stoppedOrDead(b[i+2]) {
			return true
		}
	}
	return false
}

func stoppedOrDead(s byte) bool { return s == 'T' || s == 't' || s == 'Z' || s == 'X' || s == 'x' }

// freezeCmd is one pass of an install's freeze: it stops with SIGSTOP every
// process that runs, but PID 1, itself and the agents serving the engine's
// session, and prints "stopped PID START" for each, then "pass UID ROOTS
// LEFT": its uid, how many processes the runtime started (but those it
// spares), and how many running processes it was not allowed to stop.
func freezeCmd(stdout io.Writer) int {
	self := os.Getpid()
	roots, left := 0, 0
	for _, p := range pids() {
		if p == 1 || p == self {
			continue
		}
		st, ok := readStat(p)
		if !ok || engineAgent(st) {
			continue
		}
		if st.ppid == 0 {
			roots++
		}
		if !running(st) {
			continue
		}
		if err := syscall.Kill(p, syscall.SIGSTOP); err == nil {
			fmt.Fprintf(stdout, "stopped %d %d\n", p, st.start)
		} else if err != syscall.ESRCH {
			left++
		}
	}
	fmt.Fprintf(stdout, "pass %d %d %d\n", os.Getuid(), roots, left)
	return 0
}

// thawCmd continues the processes given as "PID START" pairs, each only
// while it is still that process (a pid may be reused), and prints
// "resumed N".
func thawCmd(args []string, stdout io.Writer) int {
	n := 0
	for i := 0; i+1 < len(args); i += 2 {
		pid, err1 := strconv.Atoi(args[i])
		start, err2 := strconv.ParseUint(args[i+1], 10, 64)
		if err1 != nil || err2 != nil || pid < 2 {
			continue
		}
		if st, ok := readStat(pid); ok && st.start == start && syscall.Kill(pid, syscall.SIGCONT) == nil {
			n++
		}
	}
	fmt.Fprintf(stdout, "resumed %d\n", n)
	return 0
}

// killWritersCmd ("killwriters [--oldest-child] [SPARE...]") kills, with
// SIGSTOP then SIGKILL, every process that may be writing while no call
// runs, but PID 1, the processes the runtime started (parent 0: the
// engine's) and their children, but for the children of the agents that
// serve the engine's session (those are the sandbox's own processes), and
// the pids given (kernels, whose state the user keeps); round after round
// until two in a row kill none (at most twelve). It prints "killed N".
func killWritersCmd(args []string, stdout, stderr io.Writer) int {
	self := os.Getpid()
	spare := map[int]bool{1: true, self: true}
	for _, a := range args {
		if a == "--oldest-child" {
			spare[oldestChildOfInit()] = true
			continue
		}
		p, err := strconv.Atoi(a)
		if err != nil {
			return fail(stderr, "killwriters: %q is not a pid", a)
		}
		spare[p] = true
	}
	total, empty := 0, 0
	for round := 0; round < 12 && empty < 2; round++ {
		stats := map[int]procStat{}
		roots := map[int]bool{} // the runtime's processes whose children are spared too
		for _, p := range pids() {
			if st, ok := readStat(p); ok {
				stats[p] = st
				if p != 1 && st.ppid == 0 && !engineAgent(st) {
					roots[p] = true
				}
			}
		}
		var found []int
		for p, st := range stats {
			if spare[p] || st.ppid == 0 || roots[st.ppid] || st.state == 'Z' || st.state == 'X' {
				continue
			}
			found = append(found, p)
		}
		for _, p := range found {
			_ = syscall.Kill(p, syscall.SIGSTOP)
		}
		k := 0
		for _, p := range found {
			if syscall.Kill(p, syscall.SIGKILL) == nil {
				k++
			}
		}
		if total += k; k > 0 {
			empty = 0
		} else {
			empty++
		}
	}
	fmt.Fprintf(stdout, "killed %d\n", total)
	return 0
}

// oldestChildOfInit is PID 1's oldest child: under docker-init, the
// container's main process, whose end would stop the sandbox.
func oldestChildOfInit() int {
	best, bestStart := 0, uint64(0)
	for _, p := range pids() {
		if st, ok := readStat(p); ok && st.ppid == 1 && (best == 0 || st.start < bestStart) {
			best, bestStart = p, st.start
		}
	}
	return best
}

// whichCmd ("which [--path=P] NAME...") prints, for each name, the first
// program of that name in P (the image's PATH, as the engine read it from
// the image's config; never the sandbox's env) or the agent's fixed PATH.
func whichCmd(args []string, stdout io.Writer) int {
	var env []string
	if len(args) > 0 && strings.HasPrefix(args[0], "--path=") {
		env, args = []string{"PATH=" + strings.TrimPrefix(args[0], "--path=")}, args[1:]
	}
	for _, n := range args {
		if p, err := lookPath(n, env); err == nil && !strings.Contains(n, "/") {
			fmt.Fprintf(stdout, "%s\t%s\n", n, p)
		}
	}
	return 0
}

// workdir is the folder a process runs in: dir when it is one ("" for the
// agent's own), else "/" and a notice for the process's stderr, as a
// sandbox whose workdir went still runs.
func workdir(dir string) (string, string) {
	if dir == "" {
		return "", ""
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, ""
	}
	return "/", "sandtray: cannot enter the workdir " + dir + " (not a folder any more?); running in /\n"
}
