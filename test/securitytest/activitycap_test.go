package securitytest

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestActivityIsBounded: calls that print the most the log keeps, again and
// again, do not grow the activity the engine keeps for a sandbox, in memory
// or on disk, past their caps (16 MiB each; issue 11, item 8).
func TestActivityIsBounded(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, nil)
	const calls = 40 // 1 MiB kept from each
	for range calls {
		c.command(t, id, `head -c 1048576 /dev/zero | tr '\0' a`, 30)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acts, err := e.eng.Logs(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, a := range acts {
		kept += len(a.Stdout) + len(a.Stderr) + len(a.Input)
	}
	if kept > 17<<20 {
		t.Errorf("the engine keeps %d MiB of activity for one sandbox in memory after %d calls of 1 MiB; want at most 16 MiB", kept>>20, calls)
	}
	if len(acts) == 0 || !strings.HasPrefix(acts[len(acts)-1].Stdout, "aaaa") {
		t.Errorf("the latest call is not in the log")
	}
	var onDisk int64
	filepath.WalkDir(e.cfg.StateDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), id) && strings.Contains(d.Name(), "activity") {
			info, _ := d.Info()
			onDisk += info.Size()
		}
		return nil
	})
	if onDisk > 34<<20 {
		t.Errorf("the sandbox's activity files hold %d MiB after %d calls of 1 MiB; want at most 32 MiB", onDisk>>20, calls)
	}
}
