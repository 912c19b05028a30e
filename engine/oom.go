package engine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// oomCounters are where a sandbox sees its own cgroup's count of
// out-of-memory kills: cgroup v1's memory.oom_control, v2's memory.events.
const oomCounters = "/sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events"

// killedForMemory reports whether the kernel's OOM killer struck in the
// sandbox since the engine last looked: a SIGKILL exit alone could be anyone's
// kill -9, so the cgroup's own count decides. It costs one exec, and only
// runs after a call ended by SIGKILL or lost its process. Where the sandbox
// cannot tell (under gVisor, running out of memory stops the whole sandbox,
// and its cgroup files are gVisor's own), Docker's record of the container's
// end decides.
func (e *Engine) killedForMemory(b *box) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	_, err := e.docker.Exec(ctx, b.id, dockerExec([]string{"/bin/sh", "-c", "cat " + oomCounters + " 2>/dev/null"}, &out))
	if err == nil {
		n, ok := oomKills(out.Bytes())
		if !ok {
			return false
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		rose := n > b.oomKills
		b.oomKills = n
		return rose
	}
	// The sandbox refused the exec: it is stopping, or has stopped. Wait a
	// moment for Docker to record how it ended.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := e.docker.Inspect(ctx, b.id)
		if err != nil {
			return false
		}
		if statusOf(c.State) != sandbox.StatusRunning || time.Now().After(deadline) {
			return c.OOMKilled
		}
	}
}

// oomKills reads the "oom_kill N" line of a cgroup memory file.
func oomKills(text []byte) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// memoryNote tells the model why its code died and what to do.
func memoryNote(memoryMB int64) string {
	return fmt.Sprintf("\n[sandtray: killed for memory: the sandbox's %d MB limit was reached; use less memory, or create a sandbox with a larger memory_mb]", memoryMB)
}
