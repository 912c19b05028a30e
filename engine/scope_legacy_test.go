package engine

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/internal/statedir"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// logBuffer is an io.Writer for a logger that goroutines share.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// olderSandtray makes and starts containers as a Sandtray without engine
// identities did: labelled managed, named "sandtray-<name>" (a spare:
// "sandtray_pool-<name>"), with no sandbox.LabelEngine.
type olderSandtray struct {
	settings
	docker *docker.Client
}

func (o olderSandtray) start(t *testing.T, name string, spare bool) string {
	t.Helper()
	ctx := context.Background()
	spec, err := o.specFor(sandbox.CreateRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	labels, err := o.sandboxLabels(spec, time.Now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	delete(labels, sandbox.LabelEngine)
	containerName := containerPrefix + name
	if spare {
		labels[sandbox.LabelPool] = "older"
		delete(labels, sandbox.LabelName)
		containerName = pool.Prefix + name
	}
	opts := o.createOptions(containerName, name, spec, labels)
	opts.Cmd = []string{"sleep", "infinity"} // as its containers were: docker-init, a sleep, no agent
	id, err := o.docker.Create(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.docker.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestOlderSandtrayContainers (F37): at the first start after an upgrade,
// a container of an older Sandtray (no engine identity) is adopted only when
// the engine's state dir has a state file for it; one without, and an older
// engine's spare, are left exactly as they are, through the reaper and the
// engine's exit, and the log names them once.
func TestOlderSandtrayContainers(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.DefaultImage = dockertest.Image(t)
	cfg.StateDir = t.TempDir()
	cfg.Host.AllowedRoots = []string{t.TempDir()}
	cfg.Pool.Size = 0
	cfg.Sandbox.SessionGrace = config.Duration{} // an ephemeral sandbox it took would be reaped at once
	labels := dockertest.Labels(t)
	older := olderSandtray{settings{Config: cfg, labels: labels}, dockertest.Client(t)}

	known := older.start(t, "old-known-"+randomHex(2), false)
	store, err := statedir.New(cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(known, boxState{Persistent: true, LastUsed: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	unknownName := "old-unknown-" + randomHex(2)
	unknown := older.start(t, unknownName, false)
	spareName := "sb-" + randomHex(3)
	spare := older.start(t, spareName, true)

	var log logBuffer
	cli := dockertest.Client(t)
	e, err := newEngine(ctx, cfg, cli, Options{Labels: labels, Tick: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	te := &testEngine{Engine: e, docker: cli, owner: sandbox.Owner{Session: "s-" + randomHex(4)}, cfg: cfg, labels: labels}
	e.SessionStarted(te.owner)
	t.Cleanup(e.stopLoops)

	list, _ := e.List(ctx)
	if len(list) != 1 || list[0].ID != known || !list[0].Persistent || !strings.HasPrefix(list[0].Name, "old-known-") {
		t.Fatalf("after the upgrade the engine lists %+v, want only the container its state dir knows, persistent", list)
	}
	if got := te.command(t, known, "echo adopted").Stdout; got != "adopted\n" {
		t.Errorf("the adopted container: %q", got)
	}
	if _, err := e.Create(ctx, te.owner, sandbox.CreateRequest{Name: list[0].Name}, nil); err == nil {
		t.Error("a new sandbox took the name of an adopted older one")
	}
	e.reapOnce(ctx) // one more pass besides the start's: reaps nothing of theirs
	te.exit(t)

	for _, c := range []struct{ id, what string }{{unknown, "an unknown older container"}, {spare, "an older engine's spare"}, {known, "the adopted persistent one"}} {
		got, err := cli.Inspect(ctx, c.id)
		if err != nil || got.State != "running" {
			t.Errorf("%s after the engine's start and exit: %+v, %v; want it running, untouched", c.what, got.State, err)
		}
	}
	logged := log.String()
	if n := strings.Count(logged, "left alone"); n != 1 || !strings.Contains(logged, unknownName) || !strings.Contains(logged, spareName) {
		t.Errorf("the log says %d times what was left alone; want once, naming %s and %s:\n%s", n, unknownName, spareName, logged)
	}

	again := startEngine(t, cfg, labels)
	if got := again.ids(t); !slices.Equal(got, []string{known}) {
		t.Errorf("the next start lists %v, want the adopted older container again", got)
	}
}
