package securitytest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// These faults leave the Docker daemon alone, so they run with the normal
// suite; those that restart or freeze it are in daemon_fault_test.go.

// snapshotShows waits until the engine's published snapshot satisfies cond.
func snapshotShows(t *testing.T, e *env, within time.Duration, what string, cond func(sandbox.Snapshot) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	w := e.eng.Watch(ctx)
	for {
		snap, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("within %s, no snapshot showed %s", within, what)
		}
		if cond(snap) {
			return
		}
	}
}

func statusIn(snap sandbox.Snapshot, id string) (sandbox.Status, bool) {
	for _, s := range snap.Sandboxes {
		if s.ID == id {
			return s.Status, true
		}
	}
	return "", false
}

// TestSandboxKilledBehindTheEngine: a sandbox killed or removed with the
// docker CLI shows so in the state and the snapshots within two seconds.
func TestSandboxKilledBehindTheEngine(t *testing.T) {
	e := newEnv(t)
	id := e.client.sandbox(t, map[string]any{"persistent": true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.docker.Kill(ctx, id); err != nil {
		t.Fatal(err)
	}
	snapshotShows(t, e, 2*time.Second, "the killed sandbox as stopped", func(s sandbox.Snapshot) bool {
		st, ok := statusIn(s, id)
		return ok && st == sandbox.StatusStopped
	})
	if info, err := e.eng.Get(ctx, id); err != nil || info.Status != sandbox.StatusStopped {
		t.Errorf("after a kill: %v %v", info.Status, err)
	}
	// The next call starts it again.
	if out := e.client.command(t, id, "echo back", 10); strings.TrimSpace(out.stdout) != "back" {
		t.Errorf("a killed persistent sandbox did not come back: %s", out.text)
	}
	if err := e.docker.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	snapshotShows(t, e, 2*time.Second, "the removed sandbox gone", func(s sandbox.Snapshot) bool {
		_, ok := statusIn(s, id)
		return !ok
	})
	e.client.refused(t, "execute_command", map[string]any{"sandbox_id": id, "command": "true"}, "no sandbox")
}

// TestClientVanishesMidCall: a client that disappears while its call runs
// has the call cancelled (its processes killed), its session ended, and its
// ephemeral sandbox reaped after the grace period; other clients go on.
func TestClientVanishesMidCall(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Sandbox.SessionGrace = config.Duration{Duration: time.Second} })
	other := e.client
	watcher := other.sandbox(t, map[string]any{"persistent": true})
	gone := e.connect(t)
	id := gone.sandbox(t, nil)
	marker := "vanish-" + randomName()
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		done <- gone.callCtx(ctx, "execute_command", map[string]any{"sandbox_id": id, "command": "sleep 60; echo " + marker, "timeout_s": 120})
	}()
	eventually(t, 10*time.Second, "the call's sleep runs", func() bool {
		out := other.command(t, id, "ps -eo args", 10)
		return strings.Contains(out.stdout, "sleep 60")
	})
	gone.conn.Close() // the client's process dies: both pipes break
	select {
	case err := <-gone.served:
		gone.served <- err // for the cleanup's close
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not end the session of a client that vanished mid-call")
	}
	eventually(t, 10*time.Second, "the vanished client's sandbox is reaped after its grace", func() bool {
		_, err := e.eng.Get(context.Background(), id)
		return err != nil
	})
	other.stillServes(t, watcher)
}

// TestConcurrentCalls: 50 calls at once, from five clients, over every kind
// of tool; run under -race. Nothing is lost or duplicated.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t)
	clients := []*client{e.client}
	for range 4 {
		clients = append(clients, e.connect(t))
	}
	ids := make([]string, len(clients))
	for i, c := range clients {
		ids[i] = c.sandbox(t, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 50)
	for n := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, id := clients[n%len(clients)], ids[(n/len(clients))%len(ids)]
			path := fmt.Sprintf("f%d.txt", n)
			var r result
			switch n % 5 {
			case 0:
				r = c.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": fmt.Sprintf("echo %d", n)})
				if r.err == nil && strings.TrimSpace(r.str("stdout")) != fmt.Sprint(n) {
					errs <- fmt.Sprintf("call %d: stdout %q", n, r.str("stdout"))
				}
			case 1:
				r = c.call(t, "write_file", map[string]any{"sandbox_id": id, "path": path, "content": fmt.Sprint(n)})
			case 2:
				r = c.call(t, "list_files", map[string]any{"sandbox_id": id})
			case 3:
				r = c.call(t, "list_sandboxes", nil)
			case 4:
				r = c.call(t, "execute_code", map[string]any{"sandbox_id": id, "code": fmt.Sprintf("print(%d)", n)})
			}
			if r.err != nil || r.isError {
				errs <- fmt.Sprintf("call %d: %v", n, r)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	r := e.client.ok(t, "list_sandboxes", nil)
	if n := len(r.data["sandboxes"].([]any)); n != len(ids) {
		t.Errorf("after 50 concurrent calls there are %d sandboxes, want %d", n, len(ids))
	}
}
