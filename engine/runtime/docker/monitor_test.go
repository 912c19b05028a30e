package docker_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/test/dockertest"
)

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestStats(t *testing.T) {
	c, id := newSandbox(t)
	var s runtime.StatsSample
	// Right after the start, init may not have started sleep yet.
	testwait.Eventually(t, 10*time.Second, "a sample that counts init and sleep", func() bool {
		var err error
		s, err = c.Stats(testCtx(t), id)
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		return s.Pids >= 2
	})
	checks := []struct {
		name string
		ok   bool
	}{
		{"MemoryLimit is the limit set", s.MemoryLimit == testMemoryMB<<20},
		{"MemoryUsage is reported", s.MemoryUsage > 0},
		{"MemoryStats are reported", len(s.MemoryStats) > 0},
		{"CPU time is reported", s.CPUTotal > 0 && s.SystemCPU > 0},
		{"online CPUs are reported", s.OnlineCPUs > 0},
		{"pids counts init and sleep", s.Pids >= 2},
		{"read time is recent", time.Since(s.Read) < time.Minute},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s: sample %+v", ch.name, s)
		}
	}
}

func TestEventsOfRemovedContainer(t *testing.T) {
	c := dockertest.Client(t)
	o := createOptions(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	events, errc := c.Events(ctx, o.Labels)

	id := startContainer(t, c, o)
	if err := c.Remove(ctx, id); err != nil {
		t.Fatalf("Remove: %v", err)
	}

	var actions []string
	timeout := time.After(30 * time.Second)
	for !slices.Contains(actions, "destroy") {
		select {
		case ev := <-events:
			if ev.ContainerID != id {
				t.Fatalf("event %+v for another container; only %s carries this test's label", ev, id)
			}
			if ev.Time.IsZero() {
				t.Errorf("event %+v has no time", ev)
			}
			actions = append(actions, ev.Action)
		case err := <-errc:
			t.Fatalf("event stream failed after %v: %v", actions, err)
		case <-timeout:
			t.Fatalf("no destroy event within 30s; got %v", actions)
		}
	}
	for _, want := range []string{"create", "start", "die", "destroy"} {
		if !slices.Contains(actions, want) {
			t.Errorf("actions %v lack %q", actions, want)
		}
	}

	// Cancelling closes both channels, without an error.
	cancel()
	for range events {
	}
	if err, ok := <-errc; ok {
		t.Errorf("error channel delivered %v after cancel; want it closed", err)
	}
}

func TestDiff(t *testing.T) {
	c, id := newSandbox(t)
	run(t, c, id, "sh", "-c", "echo new > /workspace/added.txt && echo more >> /etc/motd && rm /etc/issue.net")
	changes, err := c.Diff(testCtx(t), id)
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	for _, want := range []runtime.Change{
		{Path: "/workspace/added.txt", Kind: runtime.ChangeAdded},
		{Path: "/etc/motd", Kind: runtime.ChangeChanged},
		{Path: "/etc/issue.net", Kind: runtime.ChangeDeleted},
	} {
		if !slices.Contains(changes, want) {
			t.Errorf("Diff lacks %+v; got %+v", want, changes)
		}
	}
}
