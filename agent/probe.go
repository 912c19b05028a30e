//go:build linux

package agent

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/agent/wire"
)

// oomFiles are where a sandbox sees its own cgroup's count of
// out-of-memory kills: cgroup v1's memory.oom_control, v2's memory.events.
var oomFiles = []string{"/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"}

// probe reads the sandbox's counters: its out-of-memory kills (absent
// where the sandbox cannot see its cgroup, as under gVisor) and how many
// processes it has.
func probe() wire.Reply {
	var r wire.Reply
	if n, ok := oomKills(); ok {
		r.OOMKills = &n
	}
	r.Pids = len(pids())
	return r
}

func oomKills() (int64, bool) {
	for _, f := range oomFiles {
		b, ok := readBounded(f, 4<<10)
		if !ok {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// oomCmd prints the count ("oom_kill N"), or nothing where there is none.
func oomCmd(stdout io.Writer) int {
	if n, ok := oomKills(); ok {
		fmt.Fprintf(stdout, "oom_kill %d\n", n)
	}
	return 0
}
