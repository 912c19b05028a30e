package run

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cgroupRetry is how long a sandbox whose cgroup was not found waits before
// it is looked for again (a few stat calls).
const cgroupRetry = time.Minute

// Cgroups reads sandboxes' CPU time from the host's cgroup files: it is the
// engine's CPUUsage when the daemon runs on this machine. Each sandbox's
// file is found once, among where Docker's cgroupfs and systemd drivers
// (and Podman's) put it under cgroup v1 and v2, and remembered. A daemon
// on another machine or in a VM (Docker Desktop) has no file here: CPU is
// then false, and the watch between calls reads Docker's stats instead
// (StatsCPU).
type Cgroups struct {
	root  string
	mu    sync.Mutex
	files map[string]cgroupFile // by container id
}

type cgroupFile struct {
	path  string // "" when not found
	v2    bool   // cpu.stat (usage_usec) rather than cpuacct.usage (ns)
	retry time.Time
}

// NewCgroups reads the cgroup hierarchy mounted at root ("" for
// /sys/fs/cgroup).
func NewCgroups(root string) *Cgroups {
	if root == "" {
		root = "/sys/fs/cgroup"
	}
	return &Cgroups{root: root, files: map[string]cgroupFile{}}
}

// cgroupPlaces are where a container's CPU accounting lives, relative to
// the cgroup root, %s being its id: cgroup v1 (cpuacct, alone or joined
// with cpu) then v2, each under the cgroupfs driver (docker/<id>) and the
// systemd one (a scope).
var cgroupPlaces = []struct {
	dir string
	v2  bool
}{
	{"cpuacct/docker/%s", false},
	{"cpu,cpuacct/docker/%s", false},
	{"cpuacct/system.slice/docker-%s.scope", false},
	{"cpu,cpuacct/system.slice/docker-%s.scope", false},
	{"cpuacct/machine.slice/libpod-%s.scope", false},
	{"docker/%s", true},
	{"system.slice/docker-%s.scope", true},
	{"machine.slice/libpod-%s.scope", true},
}

// CPU reads the CPU time the container id's processes used, now, and
// says whether it could be read.
func (c *Cgroups) CPU(id string) (CPUReading, bool) {
	if id == "" || filepath.Base(id) != id {
		return CPUReading{}, false
	}
	c.mu.Lock()
	f, ok := c.files[id]
	if !ok || (f.path == "" && time.Now().After(f.retry)) {
		f = c.find(id)
		c.files[id] = f
	}
	c.mu.Unlock()
	if f.path == "" {
		return CPUReading{}, false
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return CPUReading{}, false // stopped: its cgroup is gone until it starts again
	}
	used, ok := parseCPU(data, f.v2)
	return CPUReading{Used: used, At: time.Now()}, ok
}

func (c *Cgroups) find(id string) cgroupFile {
	for _, p := range cgroupPlaces {
		dir := filepath.Join(c.root, strings.Replace(p.dir, "%s", id, 1))
		name := "cpuacct.usage"
		if p.v2 {
			name = "cpu.stat"
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return cgroupFile{path: filepath.Join(dir, name), v2: p.v2}
		}
	}
	return cgroupFile{retry: time.Now().Add(cgroupRetry)}
}

// Forget drops what is remembered about the containers keep says no to.
func (c *Cgroups) Forget(keep func(id string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.files {
		if !keep(id) {
			delete(c.files, id)
		}
	}
}

// parseCPU reads cpuacct.usage (nanoseconds) or cpu.stat's usage_usec.
func parseCPU(data []byte, v2 bool) (time.Duration, bool) {
	if !v2 {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
		return time.Duration(n), err == nil
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("usage_usec ")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return time.Duration(n) * time.Microsecond, err == nil
		}
	}
	return 0, false
}
