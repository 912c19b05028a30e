package capture

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Diff lists the paths added, changed and deleted in t against its image,
// limited to those under p (relative to the workdir unless absolute) when p
// is given.
func (c *Capture) Diff(ctx context.Context, t Target, p string) (sandbox.Diff, error) {
	changes, err := c.docker.Diff(ctx, t.ID())
	if err != nil {
		return sandbox.Diff{}, t.Gone(fmt.Errorf("diff sandbox %s: %w", t.Name(), err))
	}
	prefix := ""
	if p != "" {
		prefix = path.Join(t.Workdir(), p)
		if path.IsAbs(p) {
			prefix = path.Clean(p)
		}
	}
	d := sandbox.Diff{Added: []string{}, Changed: []string{}, Deleted: []string{}}
	for _, ch := range changes {
		if prefix != "" && prefix != "/" && ch.Path != prefix && !strings.HasPrefix(ch.Path, prefix+"/") {
			continue
		}
		if c.cfg.Private != "" && strings.HasPrefix(ch.Path, c.cfg.Private) || agentPath(ch.Path) {
			continue // the engine's own bookkeeping, and the agent's mount point
		}
		switch ch.Kind {
		case "added":
			d.Added = append(d.Added, ch.Path)
		case "deleted":
			d.Deleted = append(d.Deleted, ch.Path)
		default:
			d.Changed = append(d.Changed, ch.Path)
		}
	}
	return d, nil
}

// agentPath reports whether p is the agent's folder or the sandbox's link
// (their mount points, which Docker makes in the container's files) or
// under one.
func agentPath(p string) bool {
	for _, d := range []string{runtime.AgentDir, runtime.LinkDir} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
