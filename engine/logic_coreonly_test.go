package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// coreOnly is a runtime with the core of the seam and none of its optional
// parts: no image store, no pause, no layer disk, no renames, no commit.
type coreOnly struct{ runtime.Runtime }

// TestLogicAnEngineOnTheCoreAlone: on a runtime with only the core, the
// engine makes a sandbox, runs a command, writes and reads a file, stops
// and deletes the sandbox; what needs an optional part is refused naming
// the runtime (a snapshot, by the first part it needs that the runtime
// lacks), and its status tells the app each part it lacks.
func TestLogicAnEngineOnTheCoreAlone(t *testing.T) {
	rt := newFakeDaemon().Connect()
	rt.SetName("core")
	cfg := logicConfig(t)
	cfg.Pool.Size = 2 // asked for, but a spare could not become a sandbox: no pool
	e, err := New(context.Background(), cfg, Options{Runtime: coreOnly{rt}, Tick: logicTick, CgroupRoot: t.TempDir(),
		Labels: map[string]string{sandbox.LabelTest: t.Name()}})
	if err != nil {
		t.Fatalf("an engine on the core alone: %v", err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	ctx := context.Background()
	owner := sandbox.Owner{Session: "s-core", Client: "logic-test 1.0"}
	e.SessionStarted(owner)

	out, err := e.ExecCommand(ctx, owner, "", sandbox.CommandRequest{Command: "echo on the core"})
	if err != nil || out.Result.Stdout != "on the core\n" {
		t.Fatalf("a command: %+v, %v", out.Result, err)
	}
	if _, err := e.WriteFile(ctx, owner, out.SandboxID, sandbox.WriteRequest{Path: "notes.txt", Data: []byte("kept")}); err != nil {
		t.Fatalf("write a file: %v", err)
	}
	if f, err := e.ReadFile(ctx, owner, out.SandboxID, "notes.txt", 0, 0); err != nil || string(f.Data) != "kept" {
		t.Errorf("read the file back: %+v, %v", f, err)
	}
	if p := e.warmPart.WarmPool(); p != nil {
		t.Error("a warm pool runs on a runtime that cannot rename a spare")
	}
	if _, err := e.Snapshot(ctx, owner, out.SandboxID, sandbox.SnapshotRequest{}); !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), `"core" runtime`) {
		t.Errorf("a snapshot on the core alone: %v, want a refusal naming the runtime", err)
	}
	st := e.runtimeStatus()
	if st.Runtime != "core" || len(st.Lacks) != len(runtime.AllCapabilities) || !strings.Contains(st.Lacks["commit"], `"core" runtime cannot`) {
		t.Errorf("the status for the app: runtime %q, lacks %v", st.Runtime, st.Lacks)
	}
	if _, err := e.Stop(ctx, owner, out.SandboxID); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := e.Delete(ctx, owner, out.SandboxID); err != nil {
		t.Errorf("delete: %v", err)
	}
}
