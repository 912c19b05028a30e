package securitytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// SoakEnv names how long TestSoak runs ("10m"); unset, it does not run.
const SoakEnv = "SANDTRAY_SOAK"

// TestSoak mixes every tool from several clients for $SANDTRAY_SOAK, then
// checks that goroutines, open files and containers are back at baseline.
// make test-soak runs it for ten minutes.
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv(SoakEnv))
	if err != nil || d <= 0 {
		t.Skipf("the soak runs only when %s names a duration, e.g. %s=10m (make test-soak)", SoakEnv, SoakEnv)
	}
	e := newEnv(t)
	runtime.GC()
	baseGoroutines, baseFiles := runtime.NumGoroutine(), openFiles(t)
	var calls, failures atomic.Int64
	var mu sync.Mutex
	var firstFailures []string
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	var clients []*client
	for w := range 4 {
		c := e.connect(t)
		clients = append(clients, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				for _, r := range soakRound(t, e, c, fmt.Sprintf("w%d-%d", w, i)) {
					calls.Add(1)
					if r.err != nil || r.isError {
						failures.Add(1)
						mu.Lock()
						if len(firstFailures) < 10 {
							firstFailures = append(firstFailures, r.String())
						}
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, c := range clients {
		c.close(t)
	}
	for _, f := range firstFailures {
		t.Errorf("soak call failed: %.300s", f)
	}
	var goroutines, files, left int
	defer func() { // also when eventually fails: the numbers it waited on
		t.Logf("30 s after the soak at most: goroutines %d (baseline %d), open files %d (%d), sandboxes left %d (0)",
			goroutines, baseGoroutines, files, baseFiles, left)
	}()
	eventually(t, 30*time.Second, "goroutines, open files and sandboxes back to the baseline after the soak", func() bool {
		runtime.GC()
		goroutines, files, left = runtime.NumGoroutine(), openFiles(t), containersOf(t, e.labels)
		return goroutines <= baseGoroutines+5 && files <= baseFiles+5 && left == 0
	})
	t.Logf("soak %s: %d calls, %d failed; goroutines %d → %d, open files %d → %d, sandboxes left %d",
		d, calls.Load(), failures.Load(), baseGoroutines, goroutines, baseFiles, files, left)
}

// soakRound is one sandbox's life, touching every tool but install and
// commit (which need a network and leave images).
func soakRound(t *testing.T, e *env, c *client, name string) []result {
	var rs []result
	add := func(tool string, args map[string]any) result {
		r := c.call(t, tool, args)
		rs = append(rs, r)
		return r
	}
	r := add("create_sandbox", map[string]any{"name": "soak-" + name})
	id := r.str("sandbox_id")
	if id == "" {
		return rs
	}
	s := func(extra map[string]any) map[string]any {
		extra["sandbox_id"] = id
		return extra
	}
	add("execute_command", s(map[string]any{"command": "echo hi; ls /", "timeout_s": 10}))
	add("execute_code", s(map[string]any{"code": "print(sum(range(10**5)))"}))
	add("write_file", s(map[string]any{"path": "d/a.txt", "content": strings.Repeat("x", 4096)}))
	add("read_file", s(map[string]any{"path": "d/a.txt"}))
	add("list_files", s(map[string]any{"depth": 2}))
	add("make_directory", s(map[string]any{"path": "e/f"}))
	host := filepath.Join(e.root, name)
	add("copy_from_sandbox", s(map[string]any{"path": "d", "host_path": host}))
	add("copy_to_sandbox", s(map[string]any{"host_path": host, "path": "back"}))
	add("diff_sandbox", s(map[string]any{}))
	add("export_dockerfile", s(map[string]any{}))
	job := add("execute_command", s(map[string]any{"command": "sleep 1; echo job", "background": true}))
	if jid := job.str("job_id"); jid != "" {
		add("job_status", map[string]any{"job_id": jid})
		add("job_stop", map[string]any{"job_id": jid})
	}
	add("execute_command", s(map[string]any{"command": "sleep 5", "timeout_s": 1}))
	add("list_sandboxes", nil)
	add("sandbox_logs", s(map[string]any{"tail": 5}))
	add("persist_sandbox", s(map[string]any{"persistent": true}))
	add("stop_sandbox", s(map[string]any{}))
	add("delete_sandbox", s(map[string]any{}))
	os.RemoveAll(host)
	return rs
}

func openFiles(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("count open files: %v", err)
	}
	return len(entries)
}
