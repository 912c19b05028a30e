package run

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// OOMKills reads the count of out-of-memory kills of t's cgroup, as the
// sandbox sees it, through its agent (its session, else an exec of the
// agent's own reader: never a program of the sandbox's). ok is false when
// the sandbox has no such count; err is set when it refused (it is
// stopping, or has stopped).
func (r *Runner) OOMKills(ctx context.Context, t sandbox.Handle) (n int64, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	if s, err := r.docker.Session(ctx, t.ID()); err == nil {
		if n, ok, _, err := s.Probe(ctx); err == nil {
			return n, ok, nil
		}
	}
	out, err := r.docker.ExecAgent(ctx, t.ID(), "", []string{"oom"}, nil, 256)
	if err != nil {
		return 0, false, err
	}
	n, ok = oomKills(out)
	return n, ok, nil
}

// DiedOfMemory reports whether Docker recorded t's container as killed for
// memory, waiting a moment for it to record how the container ended: where
// the sandbox cannot tell (under gVisor, running out of memory stops the
// whole sandbox, and its cgroup files are gVisor's own), Docker's record
// decides.
func (r *Runner) DiedOfMemory(ctx context.Context, t sandbox.Handle) bool {
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	deadline := time.Now().Add(5 * time.Second) // a busy daemon records a death late
	for {
		c, err := r.docker.Inspect(ctx, t.ID())
		if err != nil {
			return false
		}
		// A daemon may record the exit before the OOM event that explains
		// it: an exit by SIGKILL waits for it until the deadline.
		stopped := StatusOf(c.State) != sandbox.StatusRunning
		if c.OOMKilled || stopped && c.ExitCode != 137 || time.Now().After(deadline) {
			return c.OOMKilled
		}
		if sleep(ctx, 100*time.Millisecond) != nil {
			return false
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
