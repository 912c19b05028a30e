package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/test/dockertest"
)

// testEngine is a real engine on the real daemon, with its own state dir and
// test label; everything it creates is removed when the test ends.
type testEngine struct {
	*Engine
	docker *docker.Client
	owner  sandbox.Owner
	cfg    config.Config     // what the engine was made with
	labels map[string]string // the test's labels, on every container it makes
}

func newTestEngine(t testing.TB, configure ...func(*config.Config)) *testEngine {
	t.Helper()
	return newTestEngineOn(t, nil, configure...)
}

// newTestEngineOn is newTestEngine with the engine's Docker client wrapped
// by wrap (when not nil), to change one thing Docker tells the engine.
func newTestEngineOn(t testing.TB, wrap func(runtime.Full) runtime.Full, configure ...func(*config.Config)) *testEngine {
	t.Helper()
	return newTestEngineWith(t, wrap, Options{}, configure...)
}

// newTestEngineNoLink is newTestEngineOn for an engine that does not link
// to its sandboxes: their sessions are attachments and execs (the agent's
// transports on a daemon of another host), which some tests stall or kill.
func newTestEngineNoLink(t testing.TB, wrap func(runtime.Full) runtime.Full, configure ...func(*config.Config)) *testEngine {
	t.Helper()
	return newTestEngineWith(t, wrap, Options{NoLink: true}, configure...)
}

// newTestEngineWith is newTestEngineOn with opts (its labels and tick are
// the test's).
func newTestEngineWith(t testing.TB, wrap func(runtime.Full) runtime.Full, opts Options, configure ...func(*config.Config)) *testEngine {
	t.Helper()
	cli := dockertest.Client(t)
	cfg := config.Default()
	cfg.DefaultImage = dockertest.Image(t)
	cfg.StateDir = t.TempDir()
	cfg.Host.AllowedRoots = []string{t.TempDir()}
	cfg.Pool.Size = 0                       // no background fills unless a test asks (the pool tests do)
	cfg.Commit.Namespace = "sandtray-test/" // dockertest.ImageRepo's, so commits are cleaned up
	for _, c := range configure {
		c(&cfg)
	}
	ctx := context.Background()
	var api runtime.Full = cli
	if wrap != nil {
		api = wrap(api)
	}
	labels := dockertest.Labels(t)
	opts.Labels, opts.Tick = labels, 200*time.Millisecond
	e, err := newEngine(ctx, cfg, api, opts)
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	t.Cleanup(func() { e.stopLoops() })
	owner := sandbox.Owner{Session: "s-" + sandbox.RandomHex(4), Client: "engine-test 1.0"}
	e.SessionStarted(owner)
	return &testEngine{Engine: e, docker: cli, owner: owner, cfg: cfg, labels: labels}
}

// stopLoops stops the background loops as a crash would: nothing is
// removed, and the state dir's lock is gone with the process. The last-use
// saves pending are written first, so that none writes the state dir while
// the test's cleanup removes it.
func (e *Engine) stopLoops() {
	e.cancelLoops()
	e.loops.Wait()
	e.saves.Flush()
	e.execs.CloseSessions() // its sessions and links end with it
	e.lock.Release()
}

func (te *testEngine) create(t *testing.T, req sandbox.CreateRequest) sandbox.Info {
	t.Helper()
	info, err := te.Create(context.Background(), te.owner, req, nil)
	if err != nil {
		t.Fatalf("create sandbox: %v", err)
	}
	return info
}

func (te *testEngine) command(t *testing.T, id, cmd string) sandbox.ExecResult {
	t.Helper()
	out, err := te.ExecCommand(context.Background(), te.owner, id, sandbox.CommandRequest{Command: cmd})
	if err != nil {
		t.Fatalf("execute %q: %v", cmd, err)
	}
	return out.Result
}

func wantKind(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want one of kind %q", err, kind)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Eventually(t, within, what, cond)
}
