package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Idle is the CPU the bench's process (the engine) and dockerd used, in %
// of one core, with a number of idle sandboxes and the window closed or
// open; -1 where it could not be read (no /proc, a remote daemon).
type Idle struct {
	Sandboxes int
	Window    string // "closed" or "open"
	Sandtray  float64
	Dockerd   float64
}

// RSS is the resident memory of the bench's process with a number of
// sandboxes, after a garbage collection.
type RSS struct {
	Sandboxes int
	Bytes     uint64
}

// rowsInView is what an open window asks stats for: the rows a window of the
// default size shows, and the selected sandbox.
const rowsInView = 10

// measureIdle creates idle sandboxes (first 50, then 100 in all) on the
// warm engine and measures, with 50, the CPU of this process and of dockerd
// over d with the window closed (no stats asked for) and open (the rows in
// view), then the process's RSS with 50 and with 100.
func measureIdle(ctx context.Context, rep *Report, warm *stack, d time.Duration, progress io.Writer) error {
	c, err := dial(ctx, warm.path(), "sandtray-bench-idle")
	if err != nil {
		return err
	}
	defer c.close()
	var ids []string
	for _, n := range []int{50, 100} {
		fmt.Fprintf(progress, "creating idle sandboxes up to %d\n", n)
		for len(ids) < n {
			id, err := c.createSandbox(ctx, "")
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if err := warm.waitPool(ctx); err != nil {
			return err
		}
		if n == 50 {
			for _, window := range []string{"closed", "open"} {
				shown := []string{}
				if window == "open" {
					shown = ids[:rowsInView]
				}
				warm.eng.ShowStats(shown)
				fmt.Fprintf(progress, "%d idle sandboxes, window %s: settling 5s, measuring %s\n", n, window, d)
				idle, err := cpuOver(ctx, d)
				if err != nil {
					return err
				}
				idle.Sandboxes, idle.Window = n, window
				rep.Idle = append(rep.Idle, idle)
			}
			warm.eng.ShowStats(nil)
		}
		runtime.GC()
		debug.FreeOSMemory()
		rep.RSS = append(rep.RSS, RSS{Sandboxes: n, Bytes: selfRSS()})
	}
	return nil
}

// cpuOver waits 5 s for things to settle, then measures the CPU this
// process and dockerd use over d, from /proc (as docs/cpumeasure.sh does).
func cpuOver(ctx context.Context, d time.Duration) (Idle, error) {
	if err := sleep(ctx, 5*time.Second); err != nil {
		return Idle{}, err
	}
	dockerd := findProcess("dockerd")
	self0, dockerd0 := cpuTicks(os.Getpid()), cpuTicks(dockerd)
	start := time.Now()
	if err := sleep(ctx, d); err != nil {
		return Idle{}, err
	}
	secs := time.Since(start).Seconds()
	pct := func(before, after float64) float64 {
		if before < 0 || after < 0 {
			return -1
		}
		return (after - before) / clockTicks * 100 / secs
	}
	return Idle{Sandtray: pct(self0, cpuTicks(os.Getpid())), Dockerd: pct(dockerd0, cpuTicks(dockerd))}, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// cpuTicks is utime+stime of pid from /proc, or -1.
func cpuTicks(pid int) float64 {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	s, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return u + s
}

// findProcess returns the pid of the first process named comm, or 0.
func findProcess(comm string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range dirs {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == comm {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	return 0
}

// selfRSS is this process's resident set (VmRSS), or 0.
func selfRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
