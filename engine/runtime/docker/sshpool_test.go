package docker_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sandtray/sandtray/engine/runtime/docker"
)

// TestSSHKeepsItsConnections: a client of an ssh:// daemon keeps the
// connections of its reads in flight for the next ones, as the disk watch
// makes them (up to 16 stats reads at once, again and again), instead of
// starting an ssh for nearly every read; and its execs, whose streams the
// SDK dials itself, still go through ssh. The ssh here is a stand-in that
// counts its starts and runs `docker system dial-stdio` on this machine.
func TestSSHKeepsItsConnections(t *testing.T) {
	cli, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker CLI here for `docker system dial-stdio`")
	}
	_, id := newSandbox(t)
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	script := "#!/bin/sh\necho >> " + starts + "\nexec " + cli + " system dial-stdio\n"
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	c, err := docker.Connect(testCtx(t), "ssh://tester@sandtray-test.invalid")
	if err != nil {
		t.Fatalf("connect through the stand-in ssh: %v", err)
	}
	defer c.Close()
	// An exec's stream is a hijacked connection, dialled by the SDK apart
	// from the pool: it must go through ssh too.
	if out := run(t, c, id, "echo", "over ssh"); out != "over ssh\n" {
		t.Fatalf("an exec through the stand-in ssh printed %q", out)
	}
	os.Remove(starts)
	const inFlight, rounds = 16, 3
	for range rounds {
		var wg sync.WaitGroup
		for range inFlight {
			wg.Go(func() {
				if _, err := c.Stats(testCtx(t), id); err != nil {
					t.Errorf("stats over ssh: %v", err)
				}
			})
		}
		wg.Wait()
	}
	b, _ := os.ReadFile(starts)
	// At most one connection per read in flight.
	if n := strings.Count(string(b), "\n"); n > inFlight {
		t.Errorf("%d ssh started for %d rounds of %d reads at once: the connections were not kept", n, rounds, inFlight)
	} else {
		t.Logf("%d ssh started for %d rounds of %d reads at once", n, rounds, inFlight)
	}
}
