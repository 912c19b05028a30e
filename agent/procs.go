//go:build linux

package agent

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	pid   int
	state byte
	ppid  int
	pgrp  int
	start uint64 // clock ticks after boot: with pid, the process's identity
}

// readStat reads /proc/PID/stat (bounded: a name holds at most 16 bytes,
// but the file is read to 4 KiB whatever it holds).
func readStat(pid int) (procStat, bool) {
	b, ok := readBounded("/proc/"+strconv.Itoa(pid)+"/stat", 4<<10)
	if !ok {
		return procStat{}, false
	}
	i := bytes.LastIndex(b, []byte(") "))
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	s := procStat{pid: pid, state: f[0][0]}
	s.ppid, _ = strconv.Atoi(f[1])
	s.pgrp, _ = strconv.Atoi(f[2])
	s.start, _ = strconv.ParseUint(f[19], 10, 64)
	return s, true
}

// readBounded reads at most max bytes of a file.
func readBounded(path string, max int64) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max))
	return b, err == nil
}

// pids lists the processes of the sandbox's pid namespace.
func pids() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]int, 0, len(names))
	for _, n := range names {
		if p, err := strconv.Atoi(n); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// maxEnviron bounds how much of a process's environment the sweep reads
// looking for a marker.
const maxEnviron = 1 << 20

// environ tells whether process pid's environment holds
// SANDTRAY_EXEC=marker (marked), and whether it could not be told: the
// environment was empty or unreadable, as for a process in the middle of an
// execve, for an instant.
func environ(pid int, marker string) (marked, unknown bool) {
	b, ok := readBounded("/proc/"+strconv.Itoa(pid)+"/environ", maxEnviron)
	if !ok || len(b) == 0 {
		return false, true
	}
	want := []byte("SANDTRAY_EXEC=" + marker)
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true, false
		}
	}
	return false, false
}

// carries reports whether process pid's environment holds
// SANDTRAY_EXEC=marker.
func carries(pid int, marker string) bool {
	marked, _ := environ(pid, marker)
	return marked
}

// sweep kills, with SIGSTOP then SIGKILL, every process (but the agent
// and PID 1) that leads or belongs to one of groups, or carries marker,
// round after round, so that a fork bomb cannot outgrow it (each round
// stops what it found before killing it), until a round finds none. A
// process started since the call began (since: clock ticks after boot, as
// /proc/PID/stat counts them; 0 for any) whose environment cannot be read
// may be in the middle of an execve: the sweep looks again a moment later,
// at most maxUnsure times. At most 100 rounds. It returns how many it
// killed.
func sweep(groups []int, marker string, since uint64) int {
	self := os.Getpid()
	in := map[int]bool{}
	for _, g := range groups {
		if g > 1 {
			in[g] = true
		}
	}
	killed, unsureRounds := 0, 0
	for round := 0; round < 100; round++ {
		var found []int
		unsure := false
		for _, p := range pids() {
			if p == 1 || p == self {
				continue
			}
			st, ok := readStat(p)
			if !ok || st.state == 'Z' || st.state == 'X' {
				continue
			}
			if in[st.pgrp] || in[p] {
				found = append(found, p)
				continue
			}
			if marker == "" {
				continue
			}
			marked, unknown := environ(p, marker)
			switch {
			case marked:
				found = append(found, p)
			case unknown && st.start >= since && st.ppid != 0:
				unsure = true
			}
		}
		if len(found) == 0 {
			if !unsure || unsureRounds >= maxUnsure {
				break
			}
			unsureRounds++
			time.Sleep(time.Millisecond)
			continue
		}
		for _, p := range found {
			_ = syscall.Kill(p, syscall.SIGSTOP)
		}
		for _, p := range found {
			if syscall.Kill(p, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	return killed
}

// maxUnsure bounds the sweep's second looks at processes whose environment
// it could not read.
const maxUnsure = 20

// started is when process pid started (clock ticks after boot), or 0.
func started(pid int) uint64 {
	st, _ := readStat(pid)
	return st.start
}
