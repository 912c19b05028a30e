package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The TestLogic tests run the engine on fakeruntime's in-memory daemon:
// no Docker, no image, milliseconds a test. They check what a user of the
// engine notices (states, reaping, jobs, call outcomes, the pool, what
// each engine and session sees), with processes the tests simulate.

// logicImage is the image the fake daemon has and the engine defaults to.
const logicImage = "sandtray-logic/sandbox:1"

// logicTick is the engine's loop period in these tests.
const logicTick = 20 * time.Millisecond

// logicEngine is an engine on a fake daemon, with its own state dir and
// test label, closed when the test ends.
type logicEngine struct {
	*Engine
	rt     *fakeruntime.Runtime // the engine's client of the daemon
	owner  sandbox.Owner
	cfg    config.Config
	labels map[string]string
	closed bool
}

// logicConfig is the configuration the logic tests start from: the fake's
// image, no pool, and a state dir of the test's.
func logicConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DefaultImage = logicImage
	cfg.StateDir = t.TempDir()
	cfg.Host.AllowedRoots = []string{t.TempDir()}
	cfg.Pool.Size = 0
	return cfg
}

// newFakeDaemon is a fake daemon with logicImage.
func newFakeDaemon() *fakeruntime.Runtime {
	rt := fakeruntime.New()
	rt.AddImage(logicImage, runtime.Image{Cmd: []string{"/bin/sh"}}, nil)
	return rt
}

// newLogicEngine starts an engine on a new fake daemon.
func newLogicEngine(t *testing.T, configure ...func(*config.Config)) *logicEngine {
	t.Helper()
	return startLogicEngine(t, newFakeDaemon(), nil, configure...)
}

// startLogicEngine starts an engine on a client of rt's daemon with
// labels (new test labels when nil), and a session of its own.
func startLogicEngine(t *testing.T, rt *fakeruntime.Runtime, labels map[string]string, configure ...func(*config.Config)) *logicEngine {
	t.Helper()
	cfg := logicConfig(t)
	for _, c := range configure {
		c(&cfg)
	}
	return startLogicEngineWith(t, rt, cfg, labels)
}

func startLogicEngineWith(t *testing.T, rt *fakeruntime.Runtime, cfg config.Config, labels map[string]string) *logicEngine {
	t.Helper()
	if labels == nil {
		labels = map[string]string{sandbox.LabelTest: t.Name() + "/" + sandbox.RandomHex(4)}
	}
	cli := rt.Connect() // Close ends this client only
	e, err := New(context.Background(), cfg, Options{Runtime: cli, Labels: labels, Tick: logicTick, CgroupRoot: t.TempDir()})
	if err != nil {
		t.Fatalf("new engine on the fake runtime: %v", err)
	}
	owner := sandbox.Owner{Session: "s-" + sandbox.RandomHex(4), Client: "logic-test 1.0"}
	e.SessionStarted(owner)
	le := &logicEngine{Engine: e, rt: cli, owner: owner, cfg: cfg, labels: labels}
	t.Cleanup(func() { le.close(t) })
	return le
}

// close closes the engine, once (the test's cleanup closes it too).
func (le *logicEngine) close(t *testing.T) {
	t.Helper()
	if le.closed {
		return
	}
	le.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := le.Close(ctx); err != nil {
		t.Errorf("close the engine: %v", err)
	}
}

func (le *logicEngine) create(t *testing.T, req sandbox.CreateRequest) sandbox.Info {
	t.Helper()
	info, err := le.Create(context.Background(), le.owner, req, nil)
	if err != nil {
		t.Fatalf("create sandbox: %v", err)
	}
	return info
}

func (le *logicEngine) run(t *testing.T, ref string, req sandbox.CommandRequest) sandbox.ExecResult {
	t.Helper()
	out, err := le.ExecCommand(context.Background(), le.owner, ref, req)
	if err != nil {
		t.Fatalf("execute %q: %v", req.Command, err)
	}
	return out.Result
}

// status is the sandbox's status as the engine reports it ("" when it
// does not know the sandbox).
func (le *logicEngine) status(ref string) sandbox.Status {
	info, err := le.Get(context.Background(), ref)
	if err != nil {
		return ""
	}
	return info.Status
}

// containerState is the container's state on the fake daemon ("" when it
// has none).
func containerState(rt *fakeruntime.Runtime, id string) string {
	c, err := rt.Inspect(context.Background(), id)
	if err != nil {
		return ""
	}
	return string(c.State)
}

// seconds bounds a wait for something the engine does within a few ticks.
const seconds = 5 * time.Second

func errorsIs(err, kind error) bool { return errors.Is(err, kind) }
